-- watch/next: the events after a watch position, in watch order, of transactions that have all
-- ended (none can come before them any more). $1 xid and $2 id of the position, $3 limit, $4 the
-- test-only broken variant (guard watch-xmin): also events past a transaction still running.
SELECT id, xid::text AS xid, kind, namespace, name, type, object
FROM watch_events
WHERE (xid, id) > ($1::xid8, $2::bigint) AND ($4::boolean OR xid < pg_snapshot_xmin(pg_current_snapshot()))
ORDER BY xid, id
LIMIT $3
