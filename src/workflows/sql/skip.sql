-- workflows/skip: waiting jobs with a need (a job of their own workflow) that ended without
-- success (Failed, Dead, Skipped, Cancelled) or is gone are Skipped, naming that need. Dependents
-- of a skipped job follow on the next statement. Oldest first, at most $1.
WITH blocked AS (
  SELECT w.uid, first.need, first.phase
  FROM jobs w
  CROSS JOIN LATERAL (
    SELECT n.name AS need, d.phase
    FROM unnest(w.needs) WITH ORDINALITY AS n(name, i)
    LEFT JOIN jobs d ON d.namespace = w.namespace AND d.name = n.name AND d.workflow_uid = w.workflow_uid
    WHERE d.uid IS NULL OR d.phase IN ('Failed', 'Dead', 'Skipped', 'Cancelled')
    ORDER BY n.i
    LIMIT 1
  ) first
  WHERE w.waiting AND w.phase = 'Pending'
  ORDER BY w.created_at, w.uid
  LIMIT $1
)
UPDATE jobs j
SET phase = 'Skipped', waiting = false, finished_at = now(), updated_at = now(),
    resource_version = j.resource_version + 1,
    reason = 'Need' || coalesce(b.phase, 'Missing'),
    message = format('need %s %s', b.need, coalesce('ended ' || b.phase, 'does not exist'))
FROM blocked b
WHERE j.uid = b.uid AND j.waiting AND j.phase = 'Pending'
RETURNING j.uid
