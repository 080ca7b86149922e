-- nodes/heartbeat: a node is alive (any replica). $1 name. Returns its state: Dead means 410.
UPDATE nodes SET last_heartbeat_at = now() WHERE name = $1 RETURNING state
