-- workflows/delete: remove a workflow whose jobs are already deleted. $1 uid.
DELETE FROM workflows WHERE uid = $1 RETURNING *
