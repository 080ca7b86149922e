-- events/xmin: the oldest transaction id still running (the next one when none runs): every
-- transaction with a smaller id has committed or aborted. No parameters.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin
