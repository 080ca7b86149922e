-- fair-share/queue_upsert: create a queue or change one (kind Queue, any replica). An unchanged spec and
-- labels write nothing and return no row. $1 namespace, $2 name, $3 labels (JSON), $4 spec (JSON),
-- $5 weight, $6 concurrency limit, $7 CPU limit millis, $8 memory limit bytes, $9 strict lanes,
-- $10 annotations (JSON).
INSERT INTO queues (namespace, name, labels, spec, weight, concurrency_limit, cpu_limit_millis, memory_limit_bytes, strict_lanes, annotations)
VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8, $9, $10::jsonb)
ON CONFLICT (namespace, name) DO UPDATE
SET labels = EXCLUDED.labels, spec = EXCLUDED.spec, weight = EXCLUDED.weight, concurrency_limit = EXCLUDED.concurrency_limit,
    cpu_limit_millis = EXCLUDED.cpu_limit_millis, memory_limit_bytes = EXCLUDED.memory_limit_bytes,
    strict_lanes = EXCLUDED.strict_lanes, annotations = EXCLUDED.annotations, updated_at = now(), resource_version = queues.resource_version + 1
WHERE (queues.labels, queues.spec, queues.annotations) IS DISTINCT FROM (EXCLUDED.labels, EXCLUDED.spec, EXCLUDED.annotations)
RETURNING (xmax = 0) AS created
