-- idempotency/prune: forget at most $2 Idempotency-Keys older than their lifetime, $1 ms (the
-- claim takes such a key over already; this frees the space).
DELETE FROM idempotency_keys
WHERE (namespace, kind, subject, key) IN (
  SELECT namespace, kind, subject, key FROM idempotency_keys
  WHERE created_at < now() - $1::bigint * interval '1 millisecond'
  LIMIT $2
)
