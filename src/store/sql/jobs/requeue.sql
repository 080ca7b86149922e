-- jobs/requeue: jobs whose assignment was given back go back to pending.
-- $1 uuid[] job uids, $2 uuid[] their assignment ids (only jobs still on that assignment move),
-- $3 reason, $4 message, $5 true when this uses up an attempt (the node died).
-- A job out of attempts fails instead.
WITH given_back AS (
  SELECT * FROM unnest($1::uuid[], $2::uuid[]) AS g(job_uid, assignment_id)
)
UPDATE jobs j
SET phase = CASE WHEN $5 AND j.attempt >= j.max_attempts THEN 'Failed' ELSE 'Pending' END,
    attempt = CASE WHEN $5 AND j.attempt < j.max_attempts THEN j.attempt + 1 ELSE j.attempt END,
    reason = CASE WHEN $5 AND j.attempt >= j.max_attempts THEN 'AttemptsExhausted' ELSE $3 END,
    message = CASE WHEN $5 AND j.attempt >= j.max_attempts
                THEN $4 || '; no attempts left (' || j.max_attempts || ')' ELSE $4 END,
    finished_at = CASE WHEN $5 AND j.attempt >= j.max_attempts THEN now() ELSE NULL END,
    due_at = now(), updated_at = now(), resource_version = j.resource_version + 1
FROM given_back g
WHERE j.uid = g.job_uid AND j.assignment_id = g.assignment_id AND j.phase IN ('Assigned', 'Running')
RETURNING j.uid, j.phase
