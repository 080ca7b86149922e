-- idempotency/set_name: the name the object made under a key ended up with (a generated name may
-- have been taken and drawn again), in the transaction that claimed the key.
-- $1 namespace, $2 kind, $3 subject, $4 key, $5 name.
UPDATE idempotency_keys SET name = $5 WHERE namespace = $1 AND kind = $2 AND subject = $3 AND key = $4
