-- cron/prune_workflows: deletes closed workflows past their CronJob's history limits, and
-- their jobs (the history stays), keeping the newest success's time on the CronJob first.
-- $1 uuid[] workflow uids (cron/prunable_workflows).
WITH gone AS (
  DELETE FROM workflows WHERE uid = ANY($1::uuid[]) AND phase <> 'Running'
  RETURNING uid, cronjob_uid, phase, updated_at
), jobs_gone AS (
  DELETE FROM jobs WHERE workflow_uid IN (SELECT uid FROM gone)
), success AS (
  SELECT cronjob_uid, max(updated_at) AS at FROM gone WHERE phase = 'Succeeded' GROUP BY cronjob_uid
)
UPDATE cronjobs c SET last_successful_time = greatest(c.last_successful_time, s.at)
FROM success s WHERE c.uid = s.cronjob_uid
