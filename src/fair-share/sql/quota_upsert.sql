-- fair-share/quota_upsert: create or change a namespace's ResourceQuota (any replica). A namespace has at
-- most one: another name there returns no row, as does an unchanged spec and labels (the caller
-- tells the two apart). The token bucket (placement's) is left as it is. $1 namespace, $2 name,
-- $3 labels (JSON), $4 spec (JSON), $5 pending jobs, $6 CPU limit millis, $7 memory limit bytes,
-- $8 placements per second, $9 burst, $10 annotations (JSON).
INSERT INTO resource_quotas (namespace, name, labels, spec, pending_jobs, cpu_limit_millis, memory_limit_bytes, rate_per_second, rate_burst, annotations)
VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8, $9, $10::jsonb)
ON CONFLICT (namespace) DO UPDATE
SET labels = EXCLUDED.labels, spec = EXCLUDED.spec, pending_jobs = EXCLUDED.pending_jobs,
    cpu_limit_millis = EXCLUDED.cpu_limit_millis, memory_limit_bytes = EXCLUDED.memory_limit_bytes,
    rate_per_second = EXCLUDED.rate_per_second, rate_burst = EXCLUDED.rate_burst, annotations = EXCLUDED.annotations,
    updated_at = now(), resource_version = resource_quotas.resource_version + 1
WHERE resource_quotas.name = EXCLUDED.name
  AND (resource_quotas.labels, resource_quotas.spec, resource_quotas.annotations) IS DISTINCT FROM (EXCLUDED.labels, EXCLUDED.spec, EXCLUDED.annotations)
RETURNING (xmax = 0) AS created
