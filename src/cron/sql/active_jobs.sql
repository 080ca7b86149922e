-- cron/active_jobs: a CronJob's unfinished Jobs, locked (Replace cancels them). $1 cronjob uid.
SELECT uid, assignment_id FROM jobs
WHERE cronjob_uid = $1 AND phase IN ('Pending', 'Assigned', 'Running')
ORDER BY uid
FOR UPDATE
