-- bench/throughput_backend_pid: the process id of this session's backend, a child of the
-- postmaster: where the benchmark finds PostgreSQL's processes on this machine. No parameters.
SELECT pg_backend_pid() AS pid
