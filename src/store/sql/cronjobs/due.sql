-- cronjobs/due: CronJobs whose next occurrence is due by the database's clock, most overdue
-- first, with how many of their Jobs are unfinished and the clock they were judged by. $1 limit.
SELECT c.uid, c.namespace, c.name, c.spec, c.version, c.next_fire_at, c.suspend, c.catch_up, c.concurrency_policy,
       c.starting_deadline_seconds, now() AS now,
       (SELECT count(*) FROM jobs j WHERE j.cronjob_uid = c.uid AND j.phase IN ('Pending', 'Assigned', 'Running'))::int AS active
FROM cronjobs c
WHERE c.next_fire_at <= now()
ORDER BY c.next_fire_at, c.uid
LIMIT $1
