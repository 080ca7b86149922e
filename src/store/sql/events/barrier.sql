-- events/barrier: takes a transaction id and ends at once (the statement is its own
-- transaction). Every transaction that had an id when this statement began has a smaller one, so
-- once the oldest running id (events/xmin) passes this one, they have all ended. No parameters.
SELECT pg_current_xact_id()::text AS xid
