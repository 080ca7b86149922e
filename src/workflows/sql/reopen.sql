-- workflows/reopen: a retried workflow runs again. $1 uid.
UPDATE workflows
SET phase = 'Running', cancelled = false, reason = 'Retried', message = 'retried from its failed jobs',
    finished_at = NULL, updated_at = now(), resource_version = resource_version + 1
WHERE uid = $1
RETURNING *
