-- placement/mark_unschedulable: say why a pending job cannot be placed on any node, as
-- Kubernetes marks a pod Unschedulable. $1 uuid[] job uids, $2 text[] messages.
UPDATE jobs j
SET reason = 'Unschedulable', message = u.message, updated_at = now(), resource_version = j.resource_version + 1
FROM unnest($1::uuid[], $2::text[]) AS u(uid, message)
WHERE j.uid = u.uid AND j.phase = 'Pending' AND j.message IS DISTINCT FROM u.message
