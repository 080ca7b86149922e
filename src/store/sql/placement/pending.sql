-- placement/pending: pending jobs that are due by the database's clock, oldest first. $1 limit.
SELECT uid, cpu_millis, memory_bytes, duration_ms, node_selector, reason
FROM jobs
WHERE phase = 'Pending' AND due_at <= now()
ORDER BY created_at, uid
LIMIT $1
