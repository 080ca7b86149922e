-- node-health/dead_candidates: Ready nodes that look dead. $1 silent ms, $2 disconnected ms,
-- $3 disconnected-quiet ms.
-- Dead: no heartbeat for $1; or the watch connection closed more than $2 ago and not back, and
-- heartbeats stopped too (for $3; a node reconnecting heartbeats faster than that, so only a
-- killed one is this quiet), or it has been closed for $1 whatever the heartbeats say.
-- Every clock counts from no earlier than lease.grace_from, the current leader's election or its
-- renewal after a stall (a new leader first gives every node a timeout to be heard: after
-- PostgreSQL was away no heartbeat could be recorded), but that grace ends $1 plus lease.lapse
-- (the longest the lease went unheard lately, migration 0031) after the event itself: a node cut
-- off is declared dead within 2 x $1 plus that lapse however often leaders change, and a node is
-- never declared dead for the time the database was away. The grace only ever delays a death: the
-- node's self-fence, which counts from the event, still comes first.
-- node-health/declare_dead.sql re-checks the same rule: change both together.
WITH since AS (
  SELECT grace_from, $1::bigint * interval '1 millisecond' + lapse AS cap FROM lease WHERE id = 1
),
looks AS (
  SELECT name,
         greatest(h.at, least(since.grace_from, h.at + since.cap))
           < now() - $1::bigint * interval '1 millisecond' AS silent,
         disconnected_at IS NOT NULL
           AND greatest(disconnected_at, least(since.grace_from, disconnected_at + since.cap))
             < now() - $2::bigint * interval '1 millisecond'
           AND (greatest(h.at, least(since.grace_from, h.at + since.cap)) < now() - $3::bigint * interval '1 millisecond'
                OR greatest(disconnected_at, least(since.grace_from, disconnected_at + since.cap))
                   < now() - $1::bigint * interval '1 millisecond') AS disconnected
  FROM nodes JOIN node_heartbeats h USING (name), since
  WHERE state = 'Ready'
)
SELECT name,
       CASE WHEN disconnected THEN 'watch connection closed and not back within ' || $2::bigint || ' ms, heartbeats stopped'
            ELSE 'no heartbeat for ' || $1::bigint || ' ms' END AS reason
FROM looks
WHERE silent OR disconnected
