-- cronjobs/prunable: finished Jobs of CronJobs beyond their history limits (successful, or failed
-- for any other end), oldest first. $1 limit.
SELECT f.uid FROM (
  SELECT j.uid, j.created_at, j.phase = 'Succeeded' AS succeeded, c.successful_history_limit, c.failed_history_limit,
         row_number() OVER (PARTITION BY j.cronjob_uid, j.phase = 'Succeeded' ORDER BY j.created_at DESC, j.uid DESC) AS newer
  FROM jobs j JOIN cronjobs c ON c.uid = j.cronjob_uid
  WHERE j.cronjob_uid IS NOT NULL AND j.phase IN ('Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead')
) f
WHERE f.newer > CASE WHEN f.succeeded THEN f.successful_history_limit ELSE f.failed_history_limit END
ORDER BY f.created_at
LIMIT $1
