-- placement/mark_waiting: say why pending jobs wait (Unschedulable, QueueAtLimit, QuotaExceeded),
-- as Kubernetes marks a pod; '' clears the reason (a job that waits only for its share stores
-- none). Only rows whose reason or message changes are written. $1 uuid[] job uids, $2 text[]
-- reasons, $3 text[] messages.
UPDATE jobs j
SET reason = nullif(u.reason, ''), message = nullif(u.message, ''), updated_at = now(), resource_version = j.resource_version + 1
FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(uid, reason, message)
WHERE j.uid = u.uid AND j.phase = 'Pending'
  AND (j.reason IS DISTINCT FROM nullif(u.reason, '') OR j.message IS DISTINCT FROM nullif(u.message, ''))
