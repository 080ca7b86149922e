-- namespaces/list: every namespace something lives in (a queue, which every namespace with jobs
-- has, or a quota), and "default", which always exists. No parameters.
SELECT namespace FROM queues
UNION SELECT namespace FROM resource_quotas
UNION SELECT 'default'
ORDER BY 1
