-- workflows/lock_by_name: a user action on a workflow (cancel, retry, delete) locks it first, and
-- so does the leader's pass over its waiting jobs: the two never interleave. $1 namespace, $2 name.
SELECT * FROM workflows WHERE namespace = $1 AND name = $2 FOR UPDATE
