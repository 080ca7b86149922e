-- cron/lock_at: a CronJob locked for a fire, only at the version and cursor the fire read (no
-- row: an edit or another fire came first). $1 uid, $2 version, $3 cursor, $4 ignore the version
-- (test-only guard switch), $5 ignore the cursor (same).
SELECT uid FROM cronjobs
WHERE uid = $1 AND (version = $2 OR $4::boolean) AND (next_fire_at = $3 OR $5::boolean)
FOR UPDATE
