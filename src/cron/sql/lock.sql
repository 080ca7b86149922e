-- cron/lock: a CronJob, locked for an edit or a delete. $1 namespace, $2 name.
SELECT * FROM cronjobs WHERE namespace = $1 AND name = $2 FOR UPDATE
