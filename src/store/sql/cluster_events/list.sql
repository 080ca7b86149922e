-- cluster_events/list: the newest events first. $1 most rows.
SELECT id, at, type, reason, object, epoch, replica, message
FROM cluster_events
ORDER BY id DESC
LIMIT $1
