-- agent-protocol/node_list: nodes by name, with how many active assignments each holds. A page (as jobs/list;
-- nodes have no namespace): after the node $1 when it is not NULL, at most $2 (all when NULL).
SELECT n.*, coalesce(h.at, n.registered_at) AS last_heartbeat_at, n.allocated_jobs AS jobs
FROM nodes n LEFT JOIN node_heartbeats h USING (name)
WHERE $1::text IS NULL OR n.name > $1
ORDER BY n.name
LIMIT $2::bigint
