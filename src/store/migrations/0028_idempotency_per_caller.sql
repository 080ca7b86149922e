-- Idempotency-Keys belong to their caller (the token's subject): one caller's key never answers
-- another's request. Each remembers a hash of the body it came with, so the same key with another
-- body is refused instead of answered with the first object; and keys expire (the claim takes an
-- expired one over; the leader's prune pass deletes them). Keys from before belong to nobody
-- (subject ''), so no caller can match them: they are left to expire.
ALTER TABLE idempotency_keys
  ADD COLUMN subject text NOT NULL DEFAULT '',
  ADD COLUMN body_hash text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ALTER COLUMN subject DROP DEFAULT, ALTER COLUMN body_hash DROP DEFAULT;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (namespace, kind, subject, key);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
