-- workflows/lock_by_name: a user action on a workflow (cancel, retry, delete) locks it first, so
-- two of them never interleave. $1 namespace, $2 name.
SELECT * FROM workflows WHERE namespace = $1 AND name = $2 FOR UPDATE
