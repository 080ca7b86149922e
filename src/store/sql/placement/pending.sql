-- placement/pending: pending jobs that are due by the database's clock and wait for no need,
-- oldest first, that could fit somewhere now or nowhere ever. $1 limit, $2 most free CPU on a
-- node, $3 most free memory on a node, $4 largest node CPU, $5 largest node memory.
SELECT uid, cpu_millis, memory_bytes, duration_ms, coalesce(path_ms, duration_ms) AS path_ms, node_selector, image, pool, reason
FROM jobs
WHERE phase = 'Pending' AND due_at <= now() AND NOT waiting
  AND ((cpu_millis <= $2 AND memory_bytes <= $3) OR cpu_millis > $4 OR memory_bytes > $5)
ORDER BY created_at, uid
LIMIT $1
