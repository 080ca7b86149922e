-- fair-share/quota_lock_pending: lock the quotas with a pending-jobs cap of these namespaces, so that two
-- submits count one after the other (count with fair-share/quota_pending_count next, in a new snapshot).
-- $1 text[] namespaces.
SELECT namespace, name, pending_jobs, rate_per_second
FROM resource_quotas
WHERE namespace = ANY($1::text[]) AND pending_jobs IS NOT NULL
ORDER BY namespace
FOR UPDATE
