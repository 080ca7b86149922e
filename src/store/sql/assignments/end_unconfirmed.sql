-- assignments/end_unconfirmed: close placements still unconfirmed past their deadline. A node
-- whose start report got in meanwhile keeps its assignment. $1 uuid[] ids.
UPDATE assignments SET state = 'Unconfirmed', finished_at = now()
WHERE id = ANY($1::uuid[]) AND state = 'Assigned' AND confirm_by < now()
RETURNING id, job_uid, node, cpu_millis, memory_bytes
