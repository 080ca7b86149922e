-- cron/insert: create a CronJob (any replica); a name already taken gives no row back.
-- $1 namespace, $2 name, $3 labels (JSON), $4 spec (JSON), $5 schedule, $6 time zone, $7 suspend,
-- $8 concurrency policy, $9 catch-up, $10 starting deadline seconds (or NULL),
-- $11 successful history limit, $12 failed history limit, $13 first occurrence (or NULL: never),
-- $14 annotations (JSON).
INSERT INTO cronjobs (namespace, name, labels, spec, schedule, time_zone, suspend, concurrency_policy, catch_up,
                      starting_deadline_seconds, successful_history_limit, failed_history_limit, next_fire_at, annotations)
VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb)
ON CONFLICT (namespace, name) DO NOTHING
RETURNING *
