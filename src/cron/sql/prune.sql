-- cron/prune: deletes finished Jobs past their CronJob's history limits (their history stays),
-- keeping the newest success's time on the CronJob first. $1 uuid[] job uids (cron/prunable).
WITH gone AS (
  DELETE FROM jobs WHERE uid = ANY($1::uuid[]) AND phase IN ('Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead')
  RETURNING cronjob_uid, phase, finished_at
), success AS (
  SELECT cronjob_uid, max(finished_at) AS at FROM gone WHERE phase = 'Succeeded' GROUP BY cronjob_uid
)
UPDATE cronjobs c SET last_successful_time = greatest(c.last_successful_time, s.at)
FROM success s WHERE c.uid = s.cronjob_uid
