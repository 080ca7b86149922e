-- placement/round_state: what a round places on, in one row and one round trip (three reads side
-- by side cost a quiet cluster's lone job 3–4 ms of wake-ups; one costs one):
-- nodes: those that can take work: Ready, with an open watch stream, and a heartbeat recorded
--   within $1 ms (a node cut off is not dead yet, but it is no home for a job). free_slots: how
--   many more runs it may be given now: under its max_jobs, and no more unclaimed than $2 (a node
--   is handed work as fast as it claims it).
-- queues: every queue with its weight and limits, and for a queue with limits what holds its
--   share now (a queue without limits needs no count: fair share weighs only the round).
-- quotas: every namespace quota with what holds its share now (when it limits CPU or memory) and
--   the placement tokens its bucket has now (refilled at rate_per_second up to rate_burst since
--   tokens_at, by the database's clock; a bucket never used is full).
-- Each a JSON array of rows (no column of them exceeds a double's exact integers).
SELECT
  (SELECT coalesce(json_agg(n ORDER BY n.name), '[]')
   FROM (SELECT name, cpu_millis, memory_bytes, allocated_cpu_millis, allocated_memory_bytes, labels, images,
                least(max_jobs - allocated_jobs, $2::int - unclaimed_jobs) AS free_slots
         FROM nodes JOIN node_heartbeats h USING (name)
         WHERE state = 'Ready' AND watch_session IS NOT NULL AND disconnected_at IS NULL
           AND h.at > now() - $1::bigint * interval '1 millisecond') n) AS nodes,
  (SELECT coalesce(json_agg(q ORDER BY q.namespace, q.name), '[]')
   FROM (SELECT q.namespace, q.name, q.weight, q.strict_lanes, q.concurrency_limit, q.cpu_limit_millis,
                q.memory_limit_bytes, coalesce(u.running, 0)::int AS running, coalesce(u.cpu, 0)::bigint AS cpu,
                coalesce(u.memory, 0)::bigint AS memory
         FROM queues q
         LEFT JOIN LATERAL (SELECT count(*) AS running, sum(h.cpu_millis) AS cpu, sum(h.memory_bytes) AS memory
                            FROM share_holders h WHERE h.namespace = q.namespace AND h.queue = q.name) u
           ON q.concurrency_limit IS NOT NULL OR q.cpu_limit_millis IS NOT NULL OR q.memory_limit_bytes IS NOT NULL) q)
    AS queues,
  (SELECT coalesce(json_agg(r ORDER BY r.namespace), '[]')
   FROM (SELECT r.namespace, r.name, r.cpu_limit_millis, r.memory_limit_bytes, r.rate_per_second, r.rate_burst,
                coalesce(u.cpu, 0)::bigint AS cpu, coalesce(u.memory, 0)::bigint AS memory,
                CASE WHEN r.rate_per_second IS NULL THEN NULL
                     ELSE least(r.rate_burst::float8,
                                coalesce(r.tokens + r.rate_per_second * extract(epoch FROM now() - r.tokens_at),
                                         r.rate_burst::float8))
                END AS tokens
         FROM resource_quotas r
         LEFT JOIN LATERAL (SELECT sum(h.cpu_millis) AS cpu, sum(h.memory_bytes) AS memory
                            FROM share_holders h WHERE h.namespace = r.namespace) u
           ON r.cpu_limit_millis IS NOT NULL OR r.memory_limit_bytes IS NOT NULL) r) AS quotas
