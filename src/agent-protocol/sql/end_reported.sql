-- agent-protocol/end_reported: a node ends its own active assignments, each with its own end state.
-- An id missing from the result was not active on that node. $1 uuid[] ids (no repeats),
-- $2 text[] end states (Succeeded, Failed, Lost, or Unconfirmed for a claim given back unrun), $3 node,
-- $4 text[] what the node said (e.g. "exit code 3"), or NULL.
-- Also an outcome (Succeeded, Failed) of an assignment already ended Lost (its node was declared
-- dead, restarted, gave it up, or it was overdue, before the report got through), as long as its
-- job is still on that assignment (not placed again; given back or not yet): the run did end,
-- and running it a second time would be for nothing.
-- In the same statement: a job that succeeded is done (only while the assignment is still its
-- current one; any other end is the leader's to decide); each node is told at commit (NOTIFY
-- fencer_assignments, as nodes/notify.sql does); and the leader is told when it has an outcome to
-- decide on, a run ended other than by success or a workflow's job ended (fencer_outcomes, as
-- jobs/notify_outcomes.sql does). One round trip for a node's batch of ends.
WITH ended AS (
  UPDATE assignments a SET state = r.state, message = r.message,
         finished_at = CASE WHEN a.state = 'Lost' THEN a.finished_at ELSE now() END
  FROM unnest($1::uuid[], $2::text[], $4::text[]) AS r(id, state, message)
  WHERE a.id = r.id AND a.node = $3
    AND (a.state IN ('Assigned', 'Running')
         OR (a.state = 'Lost' AND r.state IN ('Succeeded', 'Failed')
             AND EXISTS (SELECT 1 FROM jobs j WHERE j.uid = a.job_uid AND j.assignment_id = a.id
                         AND j.phase IN ('Pending', 'Assigned', 'Running'))))
  RETURNING a.id, a.job_uid, a.node, a.cpu_millis, a.memory_bytes, a.state, a.message
), succeeded AS (
  UPDATE jobs j
  SET phase = 'Succeeded', reason = 'Completed', message = e.message, updated_at = now(),
      resource_version = j.resource_version + 1, finished_at = now()
  FROM ended e
  WHERE e.state = 'Succeeded' AND j.uid = e.job_uid AND j.assignment_id = e.id
  RETURNING j.workflow_uid
), told AS (
  SELECT pg_notify('fencer_assignments', node) FROM (SELECT DISTINCT node FROM ended) n
), outcomes AS (
  SELECT pg_notify('fencer_outcomes', '')
  WHERE EXISTS (SELECT 1 FROM ended WHERE state <> 'Succeeded')
     OR EXISTS (SELECT 1 FROM succeeded WHERE workflow_uid IS NOT NULL)
)
SELECT e.id, e.job_uid, e.node, e.cpu_millis, e.memory_bytes, e.state,
       (SELECT count(*) FROM told)::int + (SELECT count(*) FROM outcomes)::int AS told
FROM ended e
