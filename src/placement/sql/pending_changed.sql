-- placement/pending_changed: the jobs a NOTIFY fencer_pending named that are pending now (the
-- others left the pending set), and the database's clock (the first row has it, also when no
-- job is named or pending: uid NULL). Times as epoch milliseconds. $1 uuid[] the jobs named.
SELECT j.uid, j.namespace, j.queue, j.lane, j.cpu_millis, j.memory_bytes, j.duration_ms, coalesce(j.path_ms, j.duration_ms) AS path_ms,
       j.node_selector, j.image, j.pool, j.waiting,
       (extract(epoch FROM j.due_at) * 1000)::float8 AS due_ms, (extract(epoch FROM j.created_at) * 1000)::float8 AS created_ms,
       (extract(epoch FROM now()) * 1000)::float8 AS db_now_ms
FROM (SELECT 1) one
LEFT JOIN jobs j ON j.uid = ANY($1::uuid[]) AND j.phase = 'Pending'
