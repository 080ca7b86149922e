-- cluster_events/after: the events a watch has not streamed yet, oldest first: above its
-- low-water id and not among those it streamed above it. $1 low-water id, $2 ids above it
-- already streamed (bigint[]), $3 most rows.
SELECT id, at, type, reason, object, epoch, replica, message
FROM cluster_events
WHERE id > $1 AND NOT (id = ANY ($2::bigint[]))
ORDER BY id
LIMIT $3
