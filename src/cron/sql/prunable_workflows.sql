-- cron/prunable_workflows: a CronJob's closed workflows beyond its history limits (successful,
-- or failed for any other end), oldest first, none of whose runs its node may still be running.
-- $1 limit.
SELECT p.uid
FROM cronjobs c
CROSS JOIN LATERAL (
  SELECT f.uid, f.created_at
  FROM (SELECT w.uid, w.created_at, w.phase = 'Succeeded' AS succeeded,
               row_number() OVER (PARTITION BY w.phase = 'Succeeded' ORDER BY w.created_at DESC, w.uid DESC) AS newer
        FROM workflows w
        WHERE w.cronjob_uid = c.uid AND w.phase <> 'Running'
          AND NOT EXISTS (SELECT 1 FROM jobs j JOIN assignments a ON a.job_uid = j.uid
                          WHERE j.workflow_uid = w.uid AND a.holds_until IS NOT NULL AND a.holds_until > now())) f
  WHERE f.newer > CASE WHEN f.succeeded THEN c.successful_history_limit ELSE c.failed_history_limit END
) p
ORDER BY p.created_at
LIMIT $1
