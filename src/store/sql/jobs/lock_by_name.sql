-- jobs/lock_by_name: lock one job for a user action (cancel, delete). $1 namespace, $2 name.
SELECT uid, phase, assignment_id, workflow_uid, labels FROM jobs WHERE namespace = $1 AND name = $2 FOR UPDATE
