-- job-reconcile/orphaned: jobs still Assigned or Running whose current assignment is no longer active: the
-- run failed (Failed, with the node's message), the node gave it up (Lost: it fenced itself or
-- shut down), or gave back a claim it never ran (Unconfirmed). The leader decides what comes
-- next (job-reconcile/retry). $1 limit.
SELECT j.uid AS job_uid, j.assignment_id AS id, a.state, a.message
FROM jobs j JOIN assignments a ON a.id = j.assignment_id
WHERE j.phase IN ('Assigned', 'Running') AND a.state NOT IN ('Assigned', 'Running')
LIMIT $1
