-- checker/cron_cursors: each CronJob's next occurrence not yet handled and the database's clock,
-- as ms since the Unix epoch: a cursor far behind the clock is an occurrence nobody handles.
SELECT namespace || '/' || name AS cronjob, extract(epoch FROM next_fire_at)::float8 * 1000 AS next_fire_at,
       extract(epoch FROM now())::float8 * 1000 AS checked_at
FROM cronjobs
WHERE next_fire_at IS NOT NULL
