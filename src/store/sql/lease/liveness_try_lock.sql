-- lease/liveness_try_lock: take the liveness lock of an epoch if nobody holds it, without waiting.
-- $1 lock namespace, $2 key (the epoch). Session-level: the leader holds its epoch's lock for as
-- long as its lease connection lives, so a standby that gets it knows that connection is gone.
SELECT pg_try_advisory_lock($1, $2) AS got
