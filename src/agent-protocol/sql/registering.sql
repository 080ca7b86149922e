-- agent-protocol/registering: what a registration checks, read after the node's heartbeat row is locked
-- (agent-protocol/register_heartbeat): the node's incarnation and generation (NULL when new), and the database's
-- clock in milliseconds, to which a generation is clamped (plus the stated skew). $1 name.
SELECT n.name, n.incarnation, n.generation, floor(extract(epoch FROM now()) * 1000)::bigint AS now_ms
FROM (SELECT 1) AS one LEFT JOIN nodes n ON n.name = $1
