-- jobs/retry_facts: what a retry decision needs to know of each job, locked (job first, as every
-- transaction locks). $1 uuid[] job uids.
SELECT uid, attempt, max_attempts, retry_policy, backoff_base_ms, backoff_cap_ms
FROM jobs WHERE uid = ANY($1::uuid[]) ORDER BY uid FOR UPDATE
