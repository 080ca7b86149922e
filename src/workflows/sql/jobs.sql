-- workflows/jobs: the jobs of workflows, in the order they were written. $1 uuid[] workflow uids.
SELECT * FROM jobs WHERE workflow_uid = ANY($1::uuid[]) ORDER BY workflow_uid, created_at, name
