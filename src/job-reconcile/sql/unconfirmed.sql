-- job-reconcile/unconfirmed: placements their node never confirmed in time: not claimed by their
-- deadline (counted from when they were sent to the node), or never sent at all for $2 ms (a
-- replica that holds the node's stream but cannot read its snapshots). $1 limit.
SELECT id, job_uid FROM assignments
WHERE state = 'Assigned'
  AND (confirm_by < now() OR (confirm_by IS NULL AND created_at < now() - $2::bigint * interval '1 millisecond'))
ORDER BY created_at LIMIT $1
