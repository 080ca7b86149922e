-- nodes/heartbeat: a node is alive (any replica, or its registration). $1 name, $2 true when
-- registering (the node's row may not exist yet). No row back: no such node. Only the heartbeat
-- row is written and locked (see migration 0005); the caller then reads the node's state in a
-- new statement, so a death committed while this waited is seen.
INSERT INTO node_heartbeats (name, at)
SELECT $1, now() WHERE $2::boolean OR EXISTS (SELECT 1 FROM nodes WHERE name = $1)
ON CONFLICT (name) DO UPDATE SET at = EXCLUDED.at
RETURNING name
