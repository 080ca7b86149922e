-- assignments/end_reported: a node ends its own active assignments, each with its own end state.
-- An id missing from the result was not active on that node. $1 uuid[] ids (no repeats),
-- $2 text[] end states (Succeeded, Failed, Lost), $3 node.
UPDATE assignments a SET state = r.state, finished_at = now()
FROM unnest($1::uuid[], $2::text[]) AS r(id, state)
WHERE a.id = r.id AND a.node = $3 AND a.state IN ('Assigned', 'Running')
RETURNING a.id, a.job_uid, a.node, a.cpu_millis, a.memory_bytes
