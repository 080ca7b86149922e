-- jobs/set_phase: move a job whose current assignment is $2 to a new phase.
-- $1 uid, $2 assignment id, $3 phase, $4 reason, $5 message.
UPDATE jobs
SET phase = $3, reason = $4, message = $5, updated_at = now(), resource_version = resource_version + 1,
    started_at = CASE WHEN $3 = 'Running' THEN coalesce(started_at, now()) ELSE started_at END,
    finished_at = CASE WHEN $3 IN ('Succeeded', 'Failed', 'Cancelled') THEN now() ELSE finished_at END
WHERE uid = $1 AND assignment_id IS NOT DISTINCT FROM $2
RETURNING *
