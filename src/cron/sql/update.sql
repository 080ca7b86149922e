-- cron/update: an edit of a locked CronJob. The version moves, so any fire decided from the
-- row before this edit changes nothing. $1 uid, $2 labels (JSON), $3 spec (JSON), $4 schedule,
-- $5 time zone, $6 suspend, $7 concurrency policy, $8 catch-up, $9 starting deadline seconds (or
-- NULL), $10 successful history limit, $11 failed history limit, $12 the new cursor (or NULL),
-- $13 annotations (JSON).
UPDATE cronjobs
SET labels = $2::jsonb, spec = $3::jsonb, schedule = $4, time_zone = $5, suspend = $6, concurrency_policy = $7,
    catch_up = $8, starting_deadline_seconds = $9, successful_history_limit = $10, failed_history_limit = $11,
    next_fire_at = $12, annotations = $13::jsonb, version = version + 1, blocked_reason = NULL, blocked_message = NULL,
    updated_at = now(), resource_version = resource_version + 1
WHERE uid = $1
RETURNING *
