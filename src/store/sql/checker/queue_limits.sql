-- checker/queue_limits: every queue with a hard limit (as namespace/name), and every namespace
-- quota on CPU or memory (as the namespace, scope namespace), for the checker.
SELECT namespace || '/' || name AS queue, 'queue' AS scope, concurrency_limit, cpu_limit_millis::float8 AS cpu, memory_limit_bytes::float8 AS memory
FROM queues
WHERE concurrency_limit IS NOT NULL OR cpu_limit_millis IS NOT NULL OR memory_limit_bytes IS NOT NULL
UNION ALL
SELECT namespace, 'namespace', NULL, cpu_limit_millis::float8, memory_limit_bytes::float8
FROM resource_quotas
WHERE cpu_limit_millis IS NOT NULL OR memory_limit_bytes IS NOT NULL
