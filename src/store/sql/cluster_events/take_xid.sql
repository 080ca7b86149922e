-- cluster_events/take_xid: gives the transaction its id before its insert takes a row id, as the
-- triggers' inserts have (src/api/kube/events/low-water.ts relies on it). No parameters.
SELECT pg_current_xact_id()
