-- jobs/insert: accept a job (any replica). No row back: the name is taken.
-- $1 uid, $2 namespace, $3 name, $4 labels, $5 spec, $6 cpu millis, $7 memory bytes,
-- $8 duration ms, $9 node selector, $10 max attempts.
INSERT INTO jobs (uid, namespace, name, labels, spec, cpu_millis, memory_bytes, duration_ms, node_selector, max_attempts)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (namespace, name) DO NOTHING
RETURNING *
