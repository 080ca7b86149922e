-- nodes/get: one node. $1 name.
SELECT n.*, coalesce(h.at, n.registered_at) AS last_heartbeat_at
FROM nodes n LEFT JOIN node_heartbeats h USING (name) WHERE n.name = $1
