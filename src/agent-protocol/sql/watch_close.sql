-- agent-protocol/watch_close: that stream closed. Only the newest session counts: the node may already
-- be connected to another replica. $1 name, $2 session.
UPDATE nodes SET disconnected_at = now() WHERE name = $1 AND watch_session = $2 AND disconnected_at IS NULL
