-- job-reconcile/end_unconfirmed: close placements still unconfirmed past their deadline. A node
-- whose start report got in meanwhile keeps its assignment. $1 uuid[] ids, $2 ms an assignment
-- may go unsent (job-reconcile/unconfirmed).
UPDATE assignments SET state = 'Unconfirmed', finished_at = now()
WHERE id = ANY($1::uuid[]) AND state = 'Assigned'
  AND (confirm_by < now() OR (confirm_by IS NULL AND created_at < now() - $2::bigint * interval '1 millisecond'))
RETURNING id, job_uid, node, cpu_millis, memory_bytes, state
