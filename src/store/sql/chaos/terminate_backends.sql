-- chaos/terminate_backends: end every session of a replica but our own (a replica's sessions
-- carry its application_name). $1 application_name. One row per session signalled.
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()
