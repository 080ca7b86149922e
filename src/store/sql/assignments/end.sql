-- assignments/end: close active assignments. No row back for one that was not active.
-- $1 uuid[] ids, $2 the end state (Succeeded, Failed, Lost, Unconfirmed, Cancelled),
-- $3 node name or NULL (a node may only end its own assignments).
UPDATE assignments SET state = $2, finished_at = now()
WHERE id = ANY($1::uuid[]) AND state IN ('Assigned', 'Running') AND ($3::text IS NULL OR node = $3)
RETURNING id, job_uid, node, cpu_millis, memory_bytes, started_at
