-- cron/prunable: finished Jobs of CronJobs beyond their history limits (successful, or failed
-- for any other end), oldest first. From each CronJob through its own Jobs (jobs_of_cronjob):
-- never a scan of every job. A Job cancelled while running stays until its node has stopped it:
-- Forbid and Replace count it as running till then (cron/busy). $1 limit.
SELECT p.uid
FROM cronjobs c
CROSS JOIN LATERAL (
  SELECT f.uid, f.created_at
  FROM (SELECT j.uid, j.created_at, j.phase = 'Succeeded' AS succeeded,
               row_number() OVER (PARTITION BY j.phase = 'Succeeded' ORDER BY j.created_at DESC, j.uid DESC) AS newer
        FROM jobs j
        WHERE j.cronjob_uid = c.uid AND j.workflow_uid IS NULL AND j.phase IN ('Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead')
          AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.job_uid = j.uid AND a.holds_until IS NOT NULL AND a.holds_until > now())) f
  WHERE f.newer > CASE WHEN f.succeeded THEN c.successful_history_limit ELSE c.failed_history_limit END
) p
ORDER BY p.created_at
LIMIT $1
