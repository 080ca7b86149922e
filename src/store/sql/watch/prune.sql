-- watch/prune: forget events older than the time a watch may be resumed within (a resume from an
-- older resourceVersion is 410 Gone: the client lists again). $1 keep seconds, $2 most rows.
DELETE FROM watch_events
WHERE id IN (SELECT id FROM watch_events WHERE at < now() - $1 * interval '1 second' ORDER BY id LIMIT $2)
