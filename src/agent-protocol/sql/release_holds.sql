-- agent-protocol/release_holds: a node says it stopped runs whose assignments had already ended (a
-- cancel it heard of): their share is free now rather than when the hold would have run out
-- (migration 0010). Only that node's, only runs still holding. $1 uuid[] ids, $2 node.
UPDATE assignments SET holds_until = now()
WHERE id = ANY($1::uuid[]) AND node = $2 AND holds_until > now() AND state NOT IN ('Assigned', 'Running')
RETURNING id
