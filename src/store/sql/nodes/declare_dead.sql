-- nodes/declare_dead: the leader declares a node dead, re-checking in the same transaction that
-- it still looks dead (a heartbeat may just have come in). $1 name, $2 silent ms,
-- $3 disconnected ms, $4 reason. No row back: it is alive after all.
UPDATE nodes
SET state = 'Dead', dead_at = now(), dead_reason = $4, allocated_cpu_millis = 0, allocated_memory_bytes = 0
WHERE name = $1 AND state = 'Ready'
  AND (last_heartbeat_at < now() - $2::bigint * interval '1 millisecond'
       OR disconnected_at < now() - $3::bigint * interval '1 millisecond')
RETURNING name
