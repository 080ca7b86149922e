-- workflows/delete_jobs: remove a workflow's jobs (their active assignments ended first); their
-- history stays. $1 workflow uid.
DELETE FROM jobs WHERE workflow_uid = $1 RETURNING uid
