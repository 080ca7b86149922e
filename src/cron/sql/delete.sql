-- cron/delete: a CronJob, its Jobs and its workflows (their history and its occurrences
-- stay). $1 uid.
WITH jobs_gone AS (DELETE FROM jobs WHERE cronjob_uid = $1),
     workflows_gone AS (DELETE FROM workflows WHERE cronjob_uid = $1)
DELETE FROM cronjobs WHERE uid = $1
