-- node-health/suspects: how many Ready nodes there are, and how many of them the control plane has
-- not heard from lately (heartbeat overdue by $1 ms, or watch stream closed).
SELECT count(*)::int AS ready,
       (count(*) FILTER (WHERE disconnected_at IS NOT NULL OR h.at < now() - $1::bigint * interval '1 millisecond'))::int AS suspect
FROM nodes JOIN node_heartbeats h USING (name)
WHERE state = 'Ready'
