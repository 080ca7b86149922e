-- cron/record: the occurrences one fire handled, appended (the checker proves from these and
-- the Jobs' history that each occurrence was handled once). $1 cronjob uid, $2 namespace/name,
-- $3 version, $4 timestamptz[] scheduled times, $5 text[] outcomes (Fired|Skipped), $6 text[]
-- reasons, $7 uuid[] job uids, $8 text[] job names, $9 schedule, $10 time zone, $11 concurrency policy.
INSERT INTO cron_occurrences (cronjob_uid, cronjob, version, schedule, time_zone, concurrency_policy, scheduled_at, outcome, reason, job_uid, job, epoch, replica)
SELECT $1, $2, $3, $9, $10, $11, o.scheduled_at, o.outcome, o.reason, o.job_uid, o.job, fencer_decision_epoch(), current_setting('fencer.replica', true)
FROM unnest($4::timestamptz[], $5::text[], $6::text[], $7::uuid[], $8::text[]) AS o(scheduled_at, outcome, reason, job_uid, job)
