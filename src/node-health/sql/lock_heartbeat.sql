-- node-health/lock_heartbeat: the leader holds a node's heartbeat row while it decides whether the
-- node is dead, so a heartbeat either lands before (and the node lives) or waits and is then
-- told the node is dead. $1 name.
SELECT at FROM node_heartbeats WHERE name = $1 FOR UPDATE
