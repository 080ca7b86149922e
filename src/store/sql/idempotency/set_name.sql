-- idempotency/set_name: the name the object made under a key ended up with (a generated name may
-- have been taken and drawn again), in the transaction that claimed the key.
-- $1 namespace, $2 kind, $3 key, $4 name.
UPDATE idempotency_keys SET name = $4 WHERE namespace = $1 AND kind = $2 AND key = $3
