-- events/last_ids: the last id each event table's sequence has handed out (0 before any). A
-- sequence is read outside any snapshot: ids taken by transactions still running count too.
-- No parameters.
SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('history', 'id')), 0) AS history,
       coalesce(pg_sequence_last_value(pg_get_serial_sequence('cluster_events', 'id')), 0) AS cluster
