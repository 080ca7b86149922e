-- cron/occurrences: a CronJob's most recent occurrences, newest first, with when its Job (or
-- the first job of its Workflow) started: the first Running row in the history. $1 cronjob uid,
-- $2 limit.
SELECT o.scheduled_at, o.outcome, o.reason, o.job, o.at AS fired_at,
       (SELECT min(h.at) FROM history h
        WHERE h.entity = 'job' AND h.to_state = 'Running'
          AND (h.job_uid = o.job_uid OR h.job_uid IN (SELECT j.uid FROM jobs j WHERE j.workflow_uid = o.job_uid))) AS started_at
FROM cron_occurrences o
WHERE o.cronjob_uid = $1
ORDER BY o.scheduled_at DESC, o.id DESC
LIMIT $2
