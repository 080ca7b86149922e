-- nodes/watch_open: a node opened its watch stream on a replica. $1 name, $2 session, $3 replica.
UPDATE nodes SET watch_session = $2, watch_replica = $3, disconnected_at = NULL WHERE name = $1 RETURNING state
