-- history/event: one row, by id (an Event read by name). $1 id.
SELECT id, at, entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, actor
FROM history
WHERE id = $1
