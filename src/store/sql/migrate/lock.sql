-- migrate/lock: wait for the migration lock (session-level), so that replicas starting at the
-- same moment take turns. $1 lock key.
SELECT pg_advisory_lock($1)
