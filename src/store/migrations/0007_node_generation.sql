-- 0007_node_generation: each agent process of a node counts its starts (a number it keeps on its
-- disk), so that a registration can tell an older process from a newer one. A registration that
-- an older process sent and that reached a replica late must not end what the newer process
-- runs; it is refused. NULL: an agent that does not say (taken as it comes, as before).
ALTER TABLE nodes ADD COLUMN generation bigint;
