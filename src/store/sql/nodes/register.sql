-- nodes/register: a node (re)joins (any replica); its heartbeat row is written first (nodes/heartbeat). It is Ready, not yet connected (until it opens
-- its watch stream), and holds what its active assignments hold (recounted, never trusted).
-- $1 name, $2 cpu millis, $3 memory bytes, $4 labels, $5 incarnation.
INSERT INTO nodes (name, cpu_millis, memory_bytes, labels, incarnation)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (name) DO UPDATE
SET cpu_millis = EXCLUDED.cpu_millis, memory_bytes = EXCLUDED.memory_bytes, labels = EXCLUDED.labels,
    incarnation = EXCLUDED.incarnation, state = 'Ready', registered_at = now(),
    dead_at = NULL, dead_reason = NULL, watch_session = NULL, watch_replica = NULL, disconnected_at = NULL,
    watch_attempt = CASE WHEN nodes.incarnation IS DISTINCT FROM EXCLUDED.incarnation THEN 0 ELSE nodes.watch_attempt END,
    allocated_cpu_millis = (SELECT coalesce(sum(a.cpu_millis), 0) FROM assignments a
                            WHERE a.node = $1 AND a.state IN ('Assigned', 'Running')),
    allocated_memory_bytes = (SELECT coalesce(sum(a.memory_bytes), 0) FROM assignments a
                              WHERE a.node = $1 AND a.state IN ('Assigned', 'Running'))
RETURNING *, now() AS last_heartbeat_at
