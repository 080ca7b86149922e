-- bench/graphile_drop_schema: removes graphile-worker's schema and everything in it, so that each
-- run of the peer starts from an empty queue (graphile-worker installs it again). No parameters.
DROP SCHEMA IF EXISTS graphile_worker CASCADE
