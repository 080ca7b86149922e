-- placement/pending_all: every pending job, for the leader's pending set (its first round, after
-- its LISTEN connection was lost, and now and then as a safety net), with the database's clock.
-- Times as epoch milliseconds. No parameters.
SELECT j.uid, j.namespace, j.queue, j.lane, j.cpu_millis, j.memory_bytes, j.duration_ms, coalesce(j.path_ms, j.duration_ms) AS path_ms,
       j.node_selector, j.image, j.pool, j.waiting,
       (extract(epoch FROM j.due_at) * 1000)::float8 AS due_ms, (extract(epoch FROM j.created_at) * 1000)::float8 AS created_ms,
       (extract(epoch FROM now()) * 1000)::float8 AS db_now_ms
FROM jobs j
WHERE j.phase = 'Pending'
