-- workflows/skip: waiting jobs of the given workflows with a need that ended without success
-- (Failed, Dead, Skipped, Cancelled) or is gone are Skipped, naming that need. Dependents of a
-- skipped job follow on the next statement. $1 uuid[] workflow uids (locked).
UPDATE jobs j
SET phase = 'Skipped', waiting = false, finished_at = now(), updated_at = now(),
    resource_version = j.resource_version + 1,
    reason = 'Need' || coalesce(b.phase, 'Missing'),
    message = format('need %s %s', b.need, coalesce('ended ' || b.phase, 'does not exist'))
FROM (
  SELECT w.uid, first.need, first.phase
  FROM jobs w
  CROSS JOIN LATERAL (
    SELECT n.name AS need, d.phase
    FROM unnest(w.needs) WITH ORDINALITY AS n(name, i)
    LEFT JOIN jobs d ON d.namespace = w.namespace AND d.name = n.name
    WHERE d.uid IS NULL OR d.phase IN ('Failed', 'Dead', 'Skipped', 'Cancelled')
    ORDER BY n.i
    LIMIT 1
  ) first
  WHERE w.workflow_uid = ANY($1::uuid[]) AND w.waiting AND w.phase = 'Pending'
) b
WHERE j.uid = b.uid AND j.waiting AND j.phase = 'Pending'
RETURNING j.uid
