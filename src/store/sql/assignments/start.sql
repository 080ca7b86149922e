-- assignments/start: the node started it. Only an active assignment on that node may start;
-- no row back means 409. Starting twice is harmless. $1 id, $2 node.
UPDATE assignments SET state = 'Running', started_at = coalesce(started_at, now())
WHERE id = $1 AND node = $2 AND state IN ('Assigned', 'Running')
RETURNING *
