-- idempotency/claim: take an Idempotency-Key for the object about to be created. No row back:
-- the key was taken already (a retried request); a concurrent first use waits here until that
-- transaction ends. $1 namespace, $2 kind, $3 key, $4 the name the new object will have.
INSERT INTO idempotency_keys (namespace, kind, key, name) VALUES ($1, $2, $3, $4)
ON CONFLICT (namespace, kind, key) DO NOTHING
RETURNING name
