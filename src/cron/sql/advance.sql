-- cron/advance: the fire's guard. Moves the cursor past the occurrences this fire handles,
-- only from the value the decision read and only at the version it read: a fire decided before
-- an edit, or repeated from an old read, changes nothing (no row back). $1 uid, $2 version read,
-- $3 cursor read, $4 new cursor (or NULL: never again), $5 last occurrence handled, $6 last one
-- fired (or NULL), $7 ignore the version (test-only guard switch), $8 ignore the cursor (same).
UPDATE cronjobs
SET next_fire_at = $4, last_handled_at = $5, last_schedule_time = greatest(last_schedule_time, $6),
    blocked_reason = NULL, blocked_message = NULL, resource_version = resource_version + 1
WHERE uid = $1 AND (version = $2 OR $7::boolean) AND (next_fire_at = $3 OR $8::boolean)
RETURNING uid
