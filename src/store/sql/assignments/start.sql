-- assignments/start: the node started these. Only an active assignment on that node may start;
-- an id missing from the result is not active there (the node stops it). Starting twice is
-- harmless. $1 uuid[] ids, $2 node.
UPDATE assignments SET state = 'Running', started_at = coalesce(started_at, now())
WHERE id = ANY($1::uuid[]) AND node = $2 AND state IN ('Assigned', 'Running')
RETURNING id, job_uid
