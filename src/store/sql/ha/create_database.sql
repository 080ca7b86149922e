-- ha/create_database: the fencer database on a new HA cluster's primary (src/store/ha.ts). No
-- parameters; fails with 42P04 when it exists, and with 25006 on a standby.
CREATE DATABASE fencer
