-- cron/due: CronJobs whose next occurrence is due by the database's clock, most overdue
-- first, leaving out those the controller holds back for now (blocked). $1 limit, $2 uuid[]
-- CronJobs to leave out.
SELECT c.uid, c.namespace, c.name, c.spec, c.version, c.next_fire_at, c.suspend, c.catch_up, c.concurrency_policy,
       c.starting_deadline_seconds
FROM cronjobs c
WHERE c.next_fire_at <= now() AND c.uid <> ALL($2::uuid[])
ORDER BY c.next_fire_at, c.uid
LIMIT $1
