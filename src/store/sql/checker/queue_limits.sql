-- checker/queue_limits: every queue with a hard limit, as namespace/name, for the checker.
SELECT namespace || '/' || name AS queue, concurrency_limit, cpu_limit_millis::float8 AS cpu, memory_limit_bytes::float8 AS memory
FROM queues
WHERE concurrency_limit IS NOT NULL OR cpu_limit_millis IS NOT NULL OR memory_limit_bytes IS NOT NULL