-- fair-share/namespace_usage: what a namespace uses now: jobs not placed yet, jobs placed and what they
-- hold, and its oldest waiting job. $1 namespace.
SELECT p.pending, u.running, u.cpu AS allocated_cpu_millis, u.memory AS allocated_memory_bytes,
       o.name AS oldest_pending_name, o.created_at AS oldest_pending_at
FROM (SELECT count(*)::int AS pending FROM jobs WHERE namespace = $1 AND phase = 'Pending') p
CROSS JOIN (SELECT count(*)::int AS running, coalesce(sum(cpu_millis), 0)::bigint AS cpu, coalesce(sum(memory_bytes), 0)::bigint AS memory
            FROM share_holders WHERE namespace = $1) u
LEFT JOIN LATERAL (SELECT name, created_at FROM jobs WHERE namespace = $1 AND phase = 'Pending'
                   ORDER BY created_at, uid LIMIT 1) o ON true
