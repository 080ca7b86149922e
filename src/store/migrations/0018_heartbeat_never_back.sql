-- 0018_heartbeat_never_back: a node's last heartbeat only moves forward. A heartbeat records its
-- transaction's start time (now()); two of one node's heartbeats can be in flight at once (the
-- node awaits a late answer from one replica while it tries another), and the one that began
-- first can commit last. The node counts the newest it had answered, from its sending; the row
-- must not fall behind that, or the death rule would run ahead of the node's self-fence.
CREATE OR REPLACE FUNCTION fencer_heartbeat(node text) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    node_state text;
BEGIN
    INSERT INTO node_heartbeats (name, at)
    SELECT node, now() WHERE EXISTS (SELECT 1 FROM nodes WHERE name = node)
    ON CONFLICT (name) DO UPDATE SET at = GREATEST(node_heartbeats.at, EXCLUDED.at);
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT state INTO node_state FROM nodes WHERE name = node;
    RETURN node_state;
END
$$;
