-- bench/cron_lateness: every CronJob occurrence with, as ms since the Unix epoch, its scheduled
-- time, when it was handled (the fire's record) and when its Job first ran (its first Running row
-- in the history; null for a skip or a Job that never ran).
SELECT o.outcome, o.reason,
       extract(epoch FROM o.scheduled_at)::float8 * 1000 AS scheduled,
       extract(epoch FROM o.at)::float8 * 1000 AS handled,
       (SELECT extract(epoch FROM min(h.at))::float8 * 1000 FROM history h
        WHERE h.job_uid = o.job_uid AND h.entity = 'job' AND h.to_state = 'Running') AS started
FROM cron_occurrences o
ORDER BY o.scheduled_at, o.id
