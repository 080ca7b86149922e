-- cron/clock: the database's clock now (not the transaction's start): read after the row
-- lock, it is never before a fire that committed ahead of the lock.
SELECT clock_timestamp() AS now
