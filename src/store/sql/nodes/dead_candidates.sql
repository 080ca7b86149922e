-- nodes/dead_candidates: Ready nodes that look dead. $1 silent ms, $2 disconnected ms.
-- Silence counts from the later of the node's last sign of life and the current leader's
-- election: after PostgreSQL was away (no heartbeat could be recorded) or a new leader took
-- over, every node first gets a full timeout to be heard.
WITH since AS (SELECT acquired_at FROM lease WHERE id = 1)
SELECT name,
       CASE WHEN disconnected_at IS NOT NULL AND greatest(disconnected_at, since.acquired_at) < now() - $2::bigint * interval '1 millisecond'
            THEN 'watch connection closed and not back within ' || $2::bigint || ' ms'
            ELSE 'no heartbeat for ' || $1::bigint || ' ms' END AS reason
FROM nodes JOIN node_heartbeats h USING (name), since
WHERE state = 'Ready'
  AND (greatest(h.at, since.acquired_at) < now() - $1::bigint * interval '1 millisecond'
       OR (disconnected_at IS NOT NULL AND greatest(disconnected_at, since.acquired_at) < now() - $2::bigint * interval '1 millisecond'))
