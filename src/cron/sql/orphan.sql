-- cron/orphan: a CronJob deleted with propagationPolicy Orphan leaves its Jobs and workflows
-- to run on, owned by nothing. $1 cronjob uid.
WITH jobs_left AS (UPDATE jobs SET cronjob_uid = NULL WHERE cronjob_uid = $1)
UPDATE workflows SET cronjob_uid = NULL WHERE cronjob_uid = $1
