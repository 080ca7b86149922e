-- fair-share/queue_list: queues with what they hold and how many of their jobs wait, and the oldest of
-- those, in (namespace, name) order. $1 namespace (NULL: all), $2 name (NULL: all); a page (as
-- jobs/list): after $3/$4 when $3 is not NULL, at most $5 (all when NULL).
SELECT q.*, coalesce(u.running, 0)::int AS running, coalesce(u.cpu, 0)::bigint AS allocated_cpu_millis,
       coalesce(u.memory, 0)::bigint AS allocated_memory_bytes, p.pending, o.name AS oldest_pending_name, o.created_at AS oldest_pending_at
FROM queues q
LEFT JOIN LATERAL (SELECT count(*) AS running, sum(a.cpu_millis) AS cpu, sum(a.memory_bytes) AS memory
                   FROM share_holders a
                   WHERE a.namespace = q.namespace AND a.queue = q.name) u ON true
LEFT JOIN LATERAL (SELECT count(*)::int AS pending FROM jobs j
                   WHERE j.namespace = q.namespace AND j.queue = q.name AND j.phase = 'Pending') p ON true
LEFT JOIN LATERAL (SELECT j.name, j.created_at FROM jobs j
                   WHERE j.namespace = q.namespace AND j.queue = q.name AND j.phase = 'Pending'
                   ORDER BY j.created_at, j.uid LIMIT 1) o ON true
WHERE ($1::text IS NULL OR q.namespace = $1) AND ($2::text IS NULL OR q.name = $2)
  AND ($3::text IS NULL OR (q.namespace, q.name) > ($3::text, $4::text))
ORDER BY q.namespace, q.name
LIMIT $5::bigint
