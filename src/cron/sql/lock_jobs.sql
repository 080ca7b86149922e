-- cron/lock_jobs: a CronJob's Jobs, locked before they are stopped or deleted. $1 cronjob uid.
SELECT uid, phase, assignment_id FROM jobs WHERE cronjob_uid = $1 ORDER BY uid FOR UPDATE
