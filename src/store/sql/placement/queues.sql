-- placement/queues: every queue with its weight, limits and what its placed jobs hold now.
SELECT q.namespace, q.name, q.weight, q.strict_lanes, q.concurrency_limit, q.cpu_limit_millis, q.memory_limit_bytes,
       coalesce(u.running, 0)::int AS running, coalesce(u.cpu, 0)::bigint AS cpu, coalesce(u.memory, 0)::bigint AS memory
FROM queues q
LEFT JOIN (SELECT namespace, queue, count(*) AS running, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory
           FROM share_holders GROUP BY namespace, queue) u
  ON u.namespace = q.namespace AND u.queue = q.name
ORDER BY q.namespace, q.name
