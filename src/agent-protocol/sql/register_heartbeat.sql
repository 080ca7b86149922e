-- agent-protocol/register_heartbeat: a node registers, which counts as a heartbeat. $1 name. Only its heartbeat
-- row is written and locked (migration 0005); heartbeats themselves go through agent-protocol/beat. The
-- time only moves forward (migration 0018).
INSERT INTO node_heartbeats (name, at) VALUES ($1, now())
ON CONFLICT (name) DO UPDATE SET at = GREATEST(node_heartbeats.at, EXCLUDED.at)
