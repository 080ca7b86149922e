-- events/resume_expired: whether a watch may not go on from a position: the first row after it,
-- in either table, is older than what a list serves, or the position is past the ids handed out
-- (no list gave it). $1 history id, $2 cluster_events id, $3 window in seconds.
SELECT coalesce((SELECT at FROM history WHERE id > $1 ORDER BY id LIMIT 1) < now() - $3 * interval '1 second', false)
    OR coalesce((SELECT at FROM cluster_events WHERE id > $2 ORDER BY id LIMIT 1) < now() - $3 * interval '1 second', false)
    OR $1 > coalesce(pg_sequence_last_value(pg_get_serial_sequence('history', 'id')), 0)
    OR $2 > coalesce(pg_sequence_last_value(pg_get_serial_sequence('cluster_events', 'id')), 0) AS expired
