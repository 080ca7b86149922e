-- workflows/release: waiting jobs of the given workflows whose needs have all succeeded become
-- ready (placement reads them from now on, once due). $1 uuid[] workflow uids (locked).
UPDATE jobs j
SET waiting = false, reason = NULL, message = NULL, updated_at = now(), resource_version = j.resource_version + 1
WHERE j.workflow_uid = ANY($1::uuid[]) AND j.waiting AND j.phase = 'Pending'
  AND NOT EXISTS (SELECT 1 FROM unnest(j.needs) AS n(name)
                  LEFT JOIN jobs d ON d.namespace = j.namespace AND d.name = n.name
                  WHERE d.phase IS DISTINCT FROM 'Succeeded')
RETURNING j.uid
