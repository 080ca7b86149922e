-- migrate/unlock: give back the migration lock. $1 lock key.
SELECT pg_advisory_unlock($1)
