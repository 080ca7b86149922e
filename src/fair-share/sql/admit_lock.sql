-- fair-share/admit_lock: before jobs of these namespaces are inserted, in one round trip: every
-- namespace that gets jobs has its queue "default" (weight 1, no limits) unless one was made
-- already; and its quota with a pending-jobs cap is locked, so that two submits count one after
-- the other (count with fair-share/quota_pending_count next, in a new snapshot). Returns the
-- capped quotas. $1 text[] namespaces.
WITH ensured AS (
  INSERT INTO queues (namespace, name)
  SELECT DISTINCT ns, 'default' FROM unnest($1::text[]) AS ns
  ON CONFLICT (namespace, name) DO NOTHING
)
SELECT namespace, name, pending_jobs, rate_per_second
FROM resource_quotas
WHERE namespace = ANY($1::text[]) AND pending_jobs IS NOT NULL
ORDER BY namespace
FOR UPDATE
