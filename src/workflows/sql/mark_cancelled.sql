-- workflows/mark_cancelled: a user cancelled the workflow: it will close Cancelled. $1 uid.
UPDATE workflows SET cancelled = true, updated_at = now(), resource_version = resource_version + 1
WHERE uid = $1 AND phase = 'Running'
RETURNING *
