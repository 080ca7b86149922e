-- workflows/retry: a user retries a closed workflow from its failed jobs: every job that did not
-- succeed is Pending again with fresh attempts (waiting again when it has needs); succeeded jobs
-- are not run again. $1 workflow uid (locked, with its jobs).
UPDATE jobs j
SET phase = 'Pending', waiting = cardinality(j.needs) > 0, attempt = 1, due_at = now(),
    reason = 'Retried', message = 'the workflow was retried', assignment_id = NULL, node = NULL, epoch = NULL,
    started_at = NULL, finished_at = NULL, updated_at = now(), resource_version = j.resource_version + 1
WHERE j.workflow_uid = $1 AND j.phase IN ('Failed', 'Dead', 'Skipped', 'Cancelled')
RETURNING j.uid
