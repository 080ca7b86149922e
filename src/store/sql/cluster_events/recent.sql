-- cluster_events/recent: a list's events: of the newest ids up to its cut, those of the last
-- window, oldest first. $1 cut (newest id served), $2 most ids looked at, $3 window in seconds.
SELECT id, at, type, reason, object, epoch, replica, message
FROM cluster_events
WHERE id <= $1 AND id > $1 - $2 AND at >= now() - $3 * interval '1 second'
ORDER BY id
