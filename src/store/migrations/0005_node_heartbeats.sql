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
