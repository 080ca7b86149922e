-- nodes/register: a node (re)joins (any replica). A Dead node comes back Ready and empty.
-- $1 name, $2 cpu millis, $3 memory bytes, $4 labels.
INSERT INTO nodes (name, cpu_millis, memory_bytes, labels)
VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE
SET cpu_millis = EXCLUDED.cpu_millis, memory_bytes = EXCLUDED.memory_bytes, labels = EXCLUDED.labels,
    state = 'Ready', last_heartbeat_at = now(), registered_at = now(), dead_at = NULL, dead_reason = NULL,
    allocated_cpu_millis = CASE WHEN nodes.state = 'Dead' THEN 0 ELSE nodes.allocated_cpu_millis END,
    allocated_memory_bytes = CASE WHEN nodes.state = 'Dead' THEN 0 ELSE nodes.allocated_memory_bytes END
RETURNING *
