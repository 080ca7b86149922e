-- placement/queues: every queue with its weight and limits, and for a queue with limits what
-- holds its share now (a queue without limits needs no count: fair share weighs only the round).
SELECT q.namespace, q.name, q.weight, q.strict_lanes, q.concurrency_limit, q.cpu_limit_millis, q.memory_limit_bytes,
       coalesce(u.running, 0)::int AS running, coalesce(u.cpu, 0)::bigint AS cpu, coalesce(u.memory, 0)::bigint AS memory
FROM queues q
LEFT JOIN LATERAL (SELECT count(*) AS running, sum(h.cpu_millis) AS cpu, sum(h.memory_bytes) AS memory
                   FROM share_holders h WHERE h.namespace = q.namespace AND h.queue = q.name) u
  ON q.concurrency_limit IS NOT NULL OR q.cpu_limit_millis IS NOT NULL OR q.memory_limit_bytes IS NOT NULL
ORDER BY q.namespace, q.name
