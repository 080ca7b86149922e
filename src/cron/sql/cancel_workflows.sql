-- cron/cancel_workflows: Replace cancels a CronJob's running workflows (their unfinished jobs
-- were cancelled with cron/replace); they close Cancelled. $1 cronjob uid.
UPDATE workflows SET cancelled = true, updated_at = now(), resource_version = resource_version + 1
WHERE cronjob_uid = $1 AND phase = 'Running' AND NOT cancelled
