-- jobs/replay: dead letters go back to Pending with fresh attempts and disruptions (a user's action; the history
-- row names who, from fencer.actor). Only Dead jobs of no workflow move: a workflow's jobs are run
-- again by retrying the workflow, which also reopens it and its skipped jobs. $1 uuid[] uids, $2 message.
UPDATE jobs
SET phase = 'Pending', attempt = 1, disruptions = 0, due_at = greatest(now(), not_before), reason = 'Replayed', message = $2,
    assignment_id = NULL, node = NULL, epoch = NULL, started_at = NULL, finished_at = NULL,
    updated_at = now(), resource_version = resource_version + 1
WHERE uid = ANY($1::uuid[]) AND phase = 'Dead' AND workflow_uid IS NULL
RETURNING *
