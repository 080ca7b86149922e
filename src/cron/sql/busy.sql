-- cron/busy: how many of a CronJob's Jobs may still be running: unfinished, or cancelled while
-- running and not yet known to have stopped on its node (a share still held, migration 0010).
-- Forbid and Replace count these. $1 cronjob uid.
SELECT count(*)::int AS busy
FROM jobs j
WHERE j.cronjob_uid = $1
  AND (j.phase IN ('Pending', 'Assigned', 'Running')
       OR EXISTS (SELECT 1 FROM assignments a WHERE a.job_uid = j.uid AND a.holds_until IS NOT NULL AND a.holds_until > now()))
