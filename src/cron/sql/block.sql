-- cron/block: why the cron controller could not fire a due occurrence (e.g. QuotaExceeded), at
-- the version it read. $1 uid, $2 version, $3 reason, $4 message.
UPDATE cronjobs SET blocked_reason = $3, blocked_message = $4, resource_version = resource_version + 1
WHERE uid = $1 AND version = $2 AND (blocked_reason, blocked_message) IS DISTINCT FROM ($3, $4)
