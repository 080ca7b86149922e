-- 0005_node_heartbeats: heartbeats get their own table. A heartbeat used to update its node's
-- row, which placement and every report also update (the node's allocated capacity): on a busy
-- cluster a hundred heartbeats queued behind one placement transaction's row locks, timed out,
-- and the nodes fenced themselves. (Kubernetes moved node heartbeats out of the Node object,
-- into Lease objects, for the same reason.) Declaring a node dead locks its heartbeat row first
-- (store/decisions.ts), so a heartbeat and a death still happen one after the other.
CREATE TABLE node_heartbeats (
    name text PRIMARY KEY,
    at   timestamptz NOT NULL
);
INSERT INTO node_heartbeats (name, at) SELECT name, last_heartbeat_at FROM nodes;
ALTER TABLE nodes DROP COLUMN last_heartbeat_at;

-- A heartbeat in one round trip: record it, then read the node's state. The function is
-- VOLATILE, so its second statement takes a fresh snapshot, after the heartbeat row's lock was
-- had: a death committed while the heartbeat waited for that lock is what it returns. NULL: no
-- such node.
CREATE FUNCTION fencer_heartbeat(node text) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    node_state text;
BEGIN
    INSERT INTO node_heartbeats (name, at)
    SELECT node, now() WHERE EXISTS (SELECT 1 FROM nodes WHERE name = node)
    ON CONFLICT (name) DO UPDATE SET at = EXCLUDED.at;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT state INTO node_state FROM nodes WHERE name = node;
    RETURN node_state;
END
$$;
