-- nodes/list: every node, with how many active assignments it holds. No parameters.
SELECT n.*, coalesce(h.at, n.registered_at) AS last_heartbeat_at, n.allocated_jobs AS jobs
FROM nodes n LEFT JOIN node_heartbeats h USING (name) ORDER BY n.name
