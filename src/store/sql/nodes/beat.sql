-- nodes/beat: a node's heartbeat (any replica), in one round trip: fencer_heartbeat() (migration
-- 0005) records it in the node's heartbeat row and returns the node's state read after that
-- row's lock was had. $1 name. NULL state: no such node.
SELECT fencer_heartbeat($1) AS state
