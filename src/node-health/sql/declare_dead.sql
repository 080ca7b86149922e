-- node-health/declare_dead: the leader declares a node dead, re-checking in the same transaction that
-- it still looks dead (a heartbeat may just have come in), by the rule of dead_candidates.sql
-- (the same rule, written again: change both together).
-- The caller holds the node's heartbeat row (node-health/lock_heartbeat).
-- $1 name, $2 silent ms, $3 disconnected ms, $4 reason, $5 disconnected-quiet ms. No row back:
-- it is alive after all.
WITH since AS (
  SELECT grace_from, $2::bigint * interval '1 millisecond' + lapse AS cap FROM lease WHERE id = 1
)
UPDATE nodes
SET state = 'Dead', dead_at = now(), dead_reason = $4
FROM since, node_heartbeats h
WHERE nodes.name = $1 AND h.name = nodes.name AND state = 'Ready'
  AND (greatest(h.at, least(since.grace_from, h.at + since.cap))
         < now() - $2::bigint * interval '1 millisecond'
       OR (disconnected_at IS NOT NULL
           AND greatest(disconnected_at, least(since.grace_from, disconnected_at + since.cap))
             < now() - $3::bigint * interval '1 millisecond'
           AND (greatest(h.at, least(since.grace_from, h.at + since.cap)) < now() - $5::bigint * interval '1 millisecond'
                OR greatest(disconnected_at, least(since.grace_from, disconnected_at + since.cap))
                   < now() - $2::bigint * interval '1 millisecond')))
RETURNING nodes.name
