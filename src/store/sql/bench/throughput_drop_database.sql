-- bench/throughput_drop_database: drops the throughput benchmark's database, sessions and all
-- (before a run, a leftover of an interrupted one; after it). Run on a connection to another
-- database of that server, outside a transaction. No parameters.
DROP DATABASE IF EXISTS fencer_throughput WITH (FORCE)
