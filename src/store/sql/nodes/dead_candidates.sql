-- nodes/dead_candidates: Ready nodes that look dead. $1 silent ms, $2 disconnected ms.
SELECT name,
       CASE WHEN disconnected_at < now() - $2::bigint * interval '1 millisecond'
            THEN 'watch connection closed and not back within ' || $2 || ' ms'
            ELSE 'no heartbeat for ' || $1 || ' ms' END AS reason
FROM nodes
WHERE state = 'Ready'
  AND (last_heartbeat_at < now() - $1::bigint * interval '1 millisecond'
       OR disconnected_at < now() - $2::bigint * interval '1 millisecond')
