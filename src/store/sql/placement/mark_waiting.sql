-- placement/mark_waiting: say why pending jobs wait (Unschedulable, QueueAtLimit, QuotaExceeded,
-- WaitingForShare), as Kubernetes marks a pod. Only rows whose reason or message changes are
-- written. $1 uuid[] job uids, $2 text[] reasons, $3 text[] messages.
UPDATE jobs j
SET reason = u.reason, message = u.message, updated_at = now(), resource_version = j.resource_version + 1
FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(uid, reason, message)
WHERE j.uid = u.uid AND j.phase = 'Pending' AND (j.reason IS DISTINCT FROM u.reason OR j.message IS DISTINCT FROM u.message)
