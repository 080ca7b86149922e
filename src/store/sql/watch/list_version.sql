-- watch/list_version: the watch position a list read after this statement covers: the last event
-- (in watch order, xid then id) of the transactions that have all ended; 0 before any. A watch
-- from it misses nothing the list lacks (it may repeat what the list has). No parameters.
SELECT coalesce((SELECT id FROM watch_events
                 WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
                 ORDER BY xid DESC, id DESC LIMIT 1), 0) AS rv
