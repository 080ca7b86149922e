-- idempotency/prune_unchecked: idempotency/prune without its second look at the age, the broken
-- variant of the guard (src/testing/broken-guards.ts, idempotency-prune-age): a key its caller took
-- over while this statement waited on it is deleted, and a retry of that caller makes a second job.
-- $1 ttl ms, $2 limit.
DELETE FROM idempotency_keys
WHERE (namespace, kind, subject, key) IN (
  SELECT namespace, kind, subject, key FROM idempotency_keys
  WHERE created_at < now() - $1::bigint * interval '1 millisecond'
  LIMIT $2
)
