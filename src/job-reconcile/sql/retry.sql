-- job-reconcile/retry: the leader's decision for jobs whose run ended without success (src/job-reconcile/retry.ts):
-- back to Pending, due after a backoff by the database's clock, or Failed, or Dead. Only jobs still
-- on that assignment and not finished move. All arrays one entry per job: $1 uuid[] job uids,
-- $2 uuid[] their ended assignments, $3 text[] new phases (Pending, Failed, Dead), $4 bool[] uses
-- an attempt, $5 bigint[] delay ms, $6 text[] reasons, $7 text[] messages, $8 bool[] the run was
-- disrupted (its node lost it: counted apart from attempts).
UPDATE jobs j
SET phase = d.phase,
    attempt = CASE WHEN d.phase = 'Pending' AND d.uses_attempt THEN j.attempt + 1 ELSE j.attempt END,
    disruptions = CASE WHEN d.disrupted THEN j.disruptions + 1 ELSE j.disruptions END,
    reason = d.reason, message = d.message,
    finished_at = CASE WHEN d.phase = 'Pending' THEN NULL ELSE now() END,
    due_at = CASE WHEN d.phase = 'Pending' THEN now() + d.delay_ms * interval '1 millisecond' ELSE j.due_at END,
    updated_at = now(), resource_version = j.resource_version + 1
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bool[], $5::bigint[], $6::text[], $7::text[], $8::bool[])
  AS d(job_uid, assignment_id, phase, uses_attempt, delay_ms, reason, message, disrupted)
WHERE j.uid = d.job_uid AND j.assignment_id = d.assignment_id AND j.phase IN ('Assigned', 'Running')
RETURNING j.uid, j.phase
