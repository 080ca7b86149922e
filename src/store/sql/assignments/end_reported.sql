-- assignments/end_reported: a node ends its own active assignments, each with its own end state.
-- An id missing from the result was not active on that node. $1 uuid[] ids (no repeats),
-- $2 text[] end states (Succeeded, Failed, Lost, or Unconfirmed for a claim given back unrun), $3 node,
-- $4 text[] what the node said (e.g. "exit code 3"), or NULL.
-- Also an outcome (Succeeded, Failed) of an assignment already ended Lost (its node was declared
-- dead, restarted, gave it up, or it was overdue, before the report got through), as long as its
-- job is still on that assignment (not placed again; given back or not yet): the run did end,
-- and running it a second time would be for nothing.
UPDATE assignments a SET state = r.state, message = r.message,
       finished_at = CASE WHEN a.state = 'Lost' THEN a.finished_at ELSE now() END
FROM unnest($1::uuid[], $2::text[], $4::text[]) AS r(id, state, message)
WHERE a.id = r.id AND a.node = $3
  AND (a.state IN ('Assigned', 'Running')
       OR (a.state = 'Lost' AND r.state IN ('Succeeded', 'Failed')
           AND EXISTS (SELECT 1 FROM jobs j WHERE j.uid = a.job_uid AND j.assignment_id = a.id
                       AND j.phase IN ('Pending', 'Assigned', 'Running'))))
RETURNING a.id, a.job_uid, a.node, a.cpu_millis, a.memory_bytes, a.state
