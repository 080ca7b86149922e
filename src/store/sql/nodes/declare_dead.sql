-- nodes/declare_dead: the leader declares a node dead, re-checking in the same transaction that
-- it still looks dead (a heartbeat may just have come in), by the rule of dead_candidates.sql.
-- $1 name, $2 silent ms, $3 disconnected ms, $4 reason. No row back: it is alive after all.
WITH since AS (SELECT acquired_at FROM lease WHERE id = 1)
UPDATE nodes
SET state = 'Dead', dead_at = now(), dead_reason = $4, allocated_cpu_millis = 0, allocated_memory_bytes = 0
FROM since
WHERE name = $1 AND state = 'Ready'
  AND (greatest(last_heartbeat_at, since.acquired_at) < now() - $2::bigint * interval '1 millisecond'
       OR (disconnected_at IS NOT NULL AND greatest(disconnected_at, since.acquired_at) < now() - $3::bigint * interval '1 millisecond'))
RETURNING name
