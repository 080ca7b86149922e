-- cluster_events/get: one event, by id (an Event read by name). $1 id.
SELECT id, at, type, reason, object, epoch, replica, message
FROM cluster_events
WHERE id = $1
