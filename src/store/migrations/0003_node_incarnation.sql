-- 0003_node_incarnation: each agent process registers with a fresh incarnation id. A node that
-- comes back as a new process no longer runs what its previous process held.
ALTER TABLE nodes ADD COLUMN incarnation uuid;
