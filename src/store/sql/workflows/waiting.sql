-- workflows/waiting: running workflows that have waiting jobs, for the leader's pass. No lock is
-- needed: each of the pass's statements re-reads the needs it decides on and changes only jobs
-- still waiting (a user's retry or cancel that lands first is seen, one that lands later finds
-- the decision made, as if it had come after). $1 limit.
SELECT w.uid FROM workflows w
WHERE w.phase = 'Running' AND EXISTS (SELECT 1 FROM jobs j WHERE j.workflow_uid = w.uid AND j.waiting)
ORDER BY w.created_at, w.uid
LIMIT $1
