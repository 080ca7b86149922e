-- job-reconcile/retry_facts: what a retry decision needs to know of each job, locked (job first, as every
-- transaction locks), with how its current assignment ended, read under that lock: a late report
-- may have turned a Lost run into a Failed one since it was first seen. maxDisruptions comes from
-- the stored spec (10 where a job stored before it has none). $1 uuid[] job uids.
SELECT j.uid, j.attempt, j.max_attempts, j.disruptions, coalesce((j.spec ->> 'maxDisruptions')::int, 10) AS max_disruptions,
       j.retry_policy, j.backoff_base_ms, j.backoff_cap_ms,
       a.state AS assignment_state, a.message AS assignment_message
FROM jobs j LEFT JOIN assignments a ON a.id = j.assignment_id
WHERE j.uid = ANY($1::uuid[]) ORDER BY j.uid FOR UPDATE OF j
