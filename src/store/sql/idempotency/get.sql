-- idempotency/get: the name of the object an Idempotency-Key made. $1 namespace, $2 kind, $3 key.
SELECT name FROM idempotency_keys WHERE namespace = $1 AND kind = $2 AND key = $3
