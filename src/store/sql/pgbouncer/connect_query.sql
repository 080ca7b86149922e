-- pgbouncer/connect_query: what PgBouncer runs on each server session it opens for a replica's pool
-- (src/simulator/pgbouncer.ts), the settings a direct session gets from its startup options.
-- {replica} the replica's name, {timeout} idle_in_transaction_session_timeout in ms (0: none).
SET fencer.replica TO "{replica}"; SET idle_in_transaction_session_timeout TO {timeout}
