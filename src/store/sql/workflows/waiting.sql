-- workflows/waiting: running workflows with waiting jobs, without locking them: only the broken
-- variant of the workflow pass reads this (guard workflow-lock, src/guards.ts). $1 limit.
SELECT w.uid FROM workflows w
WHERE w.phase = 'Running' AND EXISTS (SELECT 1 FROM jobs j WHERE j.workflow_uid = w.uid AND j.waiting)
ORDER BY w.uid
LIMIT $1
