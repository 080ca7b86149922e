-- fair-share/quota_list: namespace quotas with what the namespace uses now: jobs not placed yet, what its
-- placed jobs hold, and its oldest waiting job, by namespace (one quota each). $1 namespace
-- (NULL: all); a page (as jobs/list): after $2/$3 when $2 is not NULL, at most $4 (all when NULL).
SELECT r.*, p.pending, coalesce(u.cpu, 0)::bigint AS allocated_cpu_millis, coalesce(u.memory, 0)::bigint AS allocated_memory_bytes,
       o.name AS oldest_pending_name, o.created_at AS oldest_pending_at
FROM resource_quotas r
LEFT JOIN LATERAL (SELECT sum(a.cpu_millis) AS cpu, sum(a.memory_bytes) AS memory FROM share_holders a
                   WHERE a.namespace = r.namespace) u ON true
LEFT JOIN LATERAL (SELECT count(*)::int AS pending FROM jobs j WHERE j.namespace = r.namespace AND j.phase = 'Pending') p ON true
LEFT JOIN LATERAL (SELECT j.name, j.created_at FROM jobs j WHERE j.namespace = r.namespace AND j.phase = 'Pending'
                   ORDER BY j.created_at, j.uid LIMIT 1) o ON true
WHERE ($1::text IS NULL OR r.namespace = $1) AND ($2::text IS NULL OR (r.namespace, r.name) > ($2::text, $3::text))
ORDER BY r.namespace, r.name
LIMIT $4::bigint
