-- bench/throughput_create_database: the throughput benchmark's database, made fresh on the server
-- it was given (fencer's tables, and graphile-worker's schema beside them). Run on a connection
-- to another database of that server, outside a transaction. No parameters.
CREATE DATABASE fencer_throughput
