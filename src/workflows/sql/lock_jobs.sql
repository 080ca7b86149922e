-- workflows/lock_jobs: lock a workflow's jobs (after the workflow, before assignments). $1 workflow uid.
SELECT uid, phase, assignment_id FROM jobs WHERE workflow_uid = $1 ORDER BY uid FOR UPDATE
