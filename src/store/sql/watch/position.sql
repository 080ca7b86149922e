-- watch/position: where a watch resumes from a resourceVersion (an event id): that event's xid,
-- and the oldest event still kept (an older version is 410 Gone). $1 event id.
SELECT (SELECT xid::text FROM watch_events WHERE id = $1) AS xid, (SELECT min(id) FROM watch_events) AS oldest
