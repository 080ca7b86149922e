-- nodes/dead_candidates: Ready nodes that look dead. $1 silent ms, $2 disconnected ms,
-- $3 disconnected-quiet ms.
-- Dead: no heartbeat for $1; or the watch connection closed more than $2 ago and not back, and
-- heartbeats stopped too (for $3; a node reconnecting heartbeats faster than that, so only a
-- killed one is this quiet), or it has been closed for $1 whatever the heartbeats say.
-- Every clock counts from the later of its event and the current leader's election: after
-- PostgreSQL was away (no heartbeat could be recorded) or a new leader took over, every node
-- first gets a full timeout to be heard.
WITH since AS (SELECT acquired_at FROM lease WHERE id = 1),
looks AS (
  SELECT name,
         greatest(h.at, since.acquired_at) < now() - $1::bigint * interval '1 millisecond' AS silent,
         disconnected_at IS NOT NULL
           AND greatest(disconnected_at, since.acquired_at) < now() - $2::bigint * interval '1 millisecond'
           AND (h.at < now() - $3::bigint * interval '1 millisecond'
                OR greatest(disconnected_at, since.acquired_at) < now() - $1::bigint * interval '1 millisecond') AS disconnected
  FROM nodes JOIN node_heartbeats h USING (name), since
  WHERE state = 'Ready'
)
SELECT name,
       CASE WHEN disconnected THEN 'watch connection closed and not back within ' || $2::bigint || ' ms, heartbeats stopped'
            ELSE 'no heartbeat for ' || $1::bigint || ' ms' END AS reason
FROM looks
WHERE silent OR disconnected
