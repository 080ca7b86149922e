-- bench/connections: every client session of this database but the asking one, with its process
-- id (the benchmark reads its memory from /proc), who it is and what it does. No parameters.
SELECT pid, coalesce(application_name, '') AS application_name, coalesce(state, '') AS state
FROM pg_stat_activity
WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
