-- cronjobs/delete: a CronJob and its Jobs (their history and its occurrences stay). $1 uid.
WITH jobs_gone AS (DELETE FROM jobs WHERE cronjob_uid = $1)
DELETE FROM cronjobs WHERE uid = $1
