-- jobs/orphaned: jobs still Assigned or Running whose current assignment is no longer active
-- (the node gave it up, e.g. after fencing itself, or gave back a claim it never ran: state
-- Unconfirmed). $1 limit.
SELECT j.uid AS job_uid, j.assignment_id AS id, a.state
FROM jobs j JOIN assignments a ON a.id = j.assignment_id
WHERE j.phase IN ('Assigned', 'Running') AND a.state NOT IN ('Assigned', 'Running')
LIMIT $1
