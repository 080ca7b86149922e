-- nodes/list: every node, with how many active assignments it holds. No parameters.
SELECT n.*, coalesce(h.at, n.registered_at) AS last_heartbeat_at, (SELECT count(*) FROM assignments a WHERE a.node = n.name AND a.state IN ('Assigned', 'Running'))::int AS jobs
FROM nodes n LEFT JOIN node_heartbeats h USING (name) ORDER BY n.name
