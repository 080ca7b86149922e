-- watch/list_version: the watch position a list read after this statement covers: the last event
-- (in watch order, xid then id) of the transactions that have all ended; 0 before any. A watch
-- from it misses nothing the list lacks (it may repeat what the list has). $1 the test-only broken
-- variant (guard watch-xmin): the last event of all, past a transaction still running.
SELECT coalesce((SELECT id FROM watch_events
                 WHERE $1::boolean OR xid < pg_snapshot_xmin(pg_current_snapshot())
                 ORDER BY xid DESC, id DESC LIMIT 1), 0) AS rv
