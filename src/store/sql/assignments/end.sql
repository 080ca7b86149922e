-- assignments/end: close active assignments. No row back for one that was not active.
-- $1 uuid[] ids, $2 the end state (Succeeded, Failed, Lost, Unconfirmed, Cancelled),
-- $3 node name or NULL (a node may only end its own assignments), $4 for a cancel: how long
-- after its duration a cancelled run may still be running on its node (ms; NULL otherwise): it
-- holds its queue's share until then (migration 0010).
UPDATE assignments SET state = $2, finished_at = now(),
  holds_until = CASE WHEN $2 = 'Cancelled' AND state = 'Running' AND $4::bigint IS NOT NULL
                     THEN greatest(now(), coalesce(started_at, now()) + (duration_ms + $4::bigint) * interval '1 millisecond') END
WHERE id = ANY($1::uuid[]) AND state IN ('Assigned', 'Running') AND ($3::text IS NULL OR node = $3)
RETURNING id, job_uid, node, cpu_millis, memory_bytes, started_at, state
