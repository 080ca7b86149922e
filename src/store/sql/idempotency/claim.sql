-- idempotency/claim: take a caller's Idempotency-Key for the object about to be created, or take
-- over the caller's expired one (older than $6 ms). No row back: the key was taken already and is
-- live (a retried request, or the same key with another body); a concurrent first use waits here
-- until that transaction ends. $1 namespace, $2 kind, $3 subject, $4 key, $5 body hash, $6 ttl ms.
INSERT INTO idempotency_keys AS k (namespace, kind, subject, key, body_hash, name)
VALUES ($1, $2, $3, $4, $5, '')
ON CONFLICT (namespace, kind, subject, key) DO UPDATE
  SET body_hash = EXCLUDED.body_hash, name = '', created_at = now()
  WHERE k.created_at < now() - $6::bigint * interval '1 millisecond'
RETURNING name
