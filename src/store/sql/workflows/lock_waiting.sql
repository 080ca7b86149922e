-- workflows/lock_waiting: the leader's pass over waiting jobs first locks the running workflows
-- that have any, so that a user's retry or cancel of one of them (which locks it too) is either
-- wholly before the pass's statements or wholly after. $1 limit.
SELECT w.uid FROM workflows w
WHERE w.phase = 'Running' AND EXISTS (SELECT 1 FROM jobs j WHERE j.workflow_uid = w.uid AND j.waiting)
ORDER BY w.uid
LIMIT $1
FOR UPDATE OF w
