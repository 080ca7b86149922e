-- lease/liveness_unlock: give back the liveness lock of an epoch this session holds. $1 lock
-- namespace, $2 key (the epoch).
SELECT pg_advisory_unlock($1, $2)
