-- idempotency/prune: forget at most $2 Idempotency-Keys older than their lifetime, $1 ms (the
-- claim takes such a key over already; this frees the space). The age is judged again on the row
-- deleted: a key its caller took over (idempotency/claim) after this statement chose it is live,
-- and the statement, waiting on its lock, goes on with the row as the claim committed it.
DELETE FROM idempotency_keys
WHERE (namespace, kind, subject, key) IN (
  SELECT namespace, kind, subject, key FROM idempotency_keys
  WHERE created_at < now() - $1::bigint * interval '1 millisecond'
  LIMIT $2
)
AND created_at < now() - $1::bigint * interval '1 millisecond'
