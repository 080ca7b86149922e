-- cluster_events/prune: forget events older than a day. $1 most rows.
DELETE FROM cluster_events
WHERE id IN (SELECT id FROM cluster_events WHERE at < now() - interval '1 day' ORDER BY id LIMIT $1)
