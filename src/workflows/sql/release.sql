-- workflows/release: waiting jobs whose needs (jobs of their own workflow) have all succeeded
-- become ready: placement reads them from now on, once due. Oldest first, at most $1; each job is
-- judged alone, so a workflow that waits long holds back no other.
WITH ready AS (
  SELECT j.uid FROM jobs j
  WHERE j.waiting AND j.phase = 'Pending'
    AND NOT EXISTS (SELECT 1 FROM unnest(j.needs) AS n(name)
                    LEFT JOIN jobs d ON d.namespace = j.namespace AND d.name = n.name AND d.workflow_uid = j.workflow_uid
                    WHERE d.phase IS DISTINCT FROM 'Succeeded')
  ORDER BY j.created_at, j.uid
  LIMIT $1
)
UPDATE jobs j
SET waiting = false, reason = NULL, message = NULL, updated_at = now(), resource_version = j.resource_version + 1
FROM ready
WHERE j.uid = ready.uid AND j.waiting AND j.phase = 'Pending'
RETURNING j.uid
