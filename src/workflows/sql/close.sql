-- workflows/close: running workflows none of whose jobs can change any more close: Cancelled when
-- a user cancelled it (or one of its jobs), Succeeded when every job succeeded, else Failed.
-- $1 limit.
WITH settled AS (
  SELECT w.uid,
         bool_and(j.phase = 'Succeeded') AS all_succeeded,
         bool_or(j.phase = 'Cancelled') AS any_cancelled,
         count(*) FILTER (WHERE j.phase IN ('Failed', 'Dead')) AS failed,
         count(*) FILTER (WHERE j.phase = 'Skipped') AS skipped
  FROM workflows w JOIN jobs j ON j.workflow_uid = w.uid
  WHERE w.phase = 'Running'
  GROUP BY w.uid
  HAVING bool_and(j.phase IN ('Succeeded', 'Failed', 'Dead', 'Skipped', 'Cancelled'))
  LIMIT $1
)
UPDATE workflows w
SET phase = CASE WHEN w.cancelled OR s.any_cancelled THEN 'Cancelled' WHEN s.all_succeeded THEN 'Succeeded' ELSE 'Failed' END,
    reason = CASE WHEN w.cancelled OR s.any_cancelled THEN 'Cancelled' WHEN s.all_succeeded THEN 'Completed' ELSE 'JobsFailed' END,
    message = CASE WHEN w.cancelled OR s.any_cancelled THEN 'cancelled by a user'
                   WHEN s.all_succeeded THEN 'every job succeeded'
                   ELSE format('%s failed, %s skipped', s.failed, s.skipped) END,
    finished_at = now(), updated_at = now(), resource_version = w.resource_version + 1
FROM settled s
WHERE w.uid = s.uid AND w.phase = 'Running'
RETURNING w.uid, w.namespace, w.name, w.phase
