-- placement/quotas: every namespace quota with what holds its share now (when it limits CPU or
-- memory) and the placement
-- tokens its bucket has now (refilled at rate_per_second up to rate_burst since tokens_at, by
-- the database's clock; a bucket never used is full).
SELECT r.namespace, r.name, r.cpu_limit_millis, r.memory_limit_bytes, r.rate_per_second, r.rate_burst,
       coalesce(u.cpu, 0)::bigint AS cpu, coalesce(u.memory, 0)::bigint AS memory,
       CASE WHEN r.rate_per_second IS NULL THEN NULL
            ELSE least(r.rate_burst::float8, coalesce(r.tokens + r.rate_per_second * extract(epoch FROM now() - r.tokens_at), r.rate_burst::float8))
       END AS tokens
FROM resource_quotas r
LEFT JOIN LATERAL (SELECT sum(h.cpu_millis) AS cpu, sum(h.memory_bytes) AS memory
                   FROM share_holders h WHERE h.namespace = r.namespace) u
  ON r.cpu_limit_millis IS NOT NULL OR r.memory_limit_bytes IS NOT NULL
ORDER BY r.namespace
