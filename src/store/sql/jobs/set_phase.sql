-- jobs/set_phase: move jobs to new phases, each only while its current assignment is the one
-- given (a job placed again since keeps its new phase).
-- $1 uuid[] uids, $2 uuid[] assignment ids, $3 text[] phases, $4 text[] reasons, $5 text[] messages.
-- One row back: how many of the jobs moved belong to a workflow (which may then move on).
WITH moved AS (
  UPDATE jobs j
  SET phase = r.phase, reason = r.reason, message = r.message, updated_at = now(),
      resource_version = j.resource_version + 1,
      started_at = CASE WHEN r.phase = 'Running' THEN coalesce(j.started_at, now()) ELSE j.started_at END,
      finished_at = CASE WHEN r.phase IN ('Succeeded', 'Failed', 'Cancelled') THEN now() ELSE j.finished_at END
  FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[]) AS r(uid, assignment_id, phase, reason, message)
  WHERE j.uid = r.uid AND j.assignment_id IS NOT DISTINCT FROM r.assignment_id
  RETURNING j.workflow_uid
)
SELECT (count(*) FILTER (WHERE workflow_uid IS NOT NULL))::int AS workflow_jobs FROM moved
