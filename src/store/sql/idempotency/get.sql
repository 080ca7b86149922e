-- idempotency/get: what a caller's Idempotency-Key made, and the hash of the body it came with.
-- $1 namespace, $2 kind, $3 subject, $4 key.
SELECT name, body_hash FROM idempotency_keys WHERE namespace = $1 AND kind = $2 AND subject = $3 AND key = $4
