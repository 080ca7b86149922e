-- history/events_after: the rows a watch has not streamed yet, oldest first: above its low-water
-- id and not among those it streamed above it. $1 low-water id, $2 ids above it already
-- streamed (bigint[]), $3 most rows.
SELECT id, at, entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, actor
FROM history
WHERE id > $1 AND NOT (id = ANY ($2::bigint[]))
ORDER BY id
LIMIT $3
