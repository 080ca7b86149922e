-- history/events_recent: a list's rows: of the newest ids up to its cut, those of the last
-- window, in one namespace or all, oldest first. The id range bounds the scan whatever matches.
-- $1 cut (newest id served), $2 most ids looked at, $3 window in seconds, $4 namespace or NULL.
SELECT id, at, entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, actor
FROM history
WHERE id <= $1 AND id > $1 - $2
  AND at >= now() - $3 * interval '1 second'
  AND ($4::text IS NULL OR split_part(job, '/', 1) = $4)
ORDER BY id
