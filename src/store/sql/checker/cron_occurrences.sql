-- checker/cron_occurrences: every CronJob occurrence record, times as ms since the Unix epoch.
SELECT id, cronjob_uid, cronjob, version, schedule, time_zone, concurrency_policy, job_uid, extract(epoch FROM scheduled_at) * 1000 AS scheduled_at, outcome, reason, job,
       extract(epoch FROM at) * 1000 AS at
FROM cron_occurrences
ORDER BY cronjob_uid, scheduled_at, id
