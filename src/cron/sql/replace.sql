-- cron/replace: concurrencyPolicy Replace cancels a CronJob's unfinished Jobs before its next
-- one starts (their assignments withdrawn in the same transaction). $1 uuid[] job uids, $2 message.
UPDATE jobs
SET phase = 'Cancelled', waiting = false, reason = 'Replaced', message = $2, finished_at = now(),
    updated_at = now(), resource_version = resource_version + 1
WHERE uid = ANY($1::uuid[]) AND phase IN ('Pending', 'Assigned', 'Running')
RETURNING uid
