-- namespaces/list: every namespace something lives in (a queue, which every namespace with jobs
-- has, or a quota), and "default", which always exists; by name. A page (as jobs/list): after
-- $1 when it is not NULL, at most $2 (all when NULL).
SELECT namespace FROM (
  SELECT namespace FROM queues
  UNION SELECT namespace FROM resource_quotas
  UNION SELECT 'default'
) n
WHERE $1::text IS NULL OR namespace > $1
ORDER BY 1
LIMIT $2::bigint
