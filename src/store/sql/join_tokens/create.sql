-- join_tokens/create: a join token for registering nodes (migration 0029). $1 id (6 of [a-z0-9]),
-- $2 the secret (16 of [a-z0-9]), kept only as its sha256, $3 its lifetime in milliseconds,
-- $4 a description. The same token again changes nothing (its expiry stays); an id already taken
-- by another secret comes back with no row.
INSERT INTO join_tokens (id, secret_sha256, description, expires_at)
VALUES ($1, sha256(convert_to($2, 'UTF8')), $4, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id
WHERE join_tokens.secret_sha256 = EXCLUDED.secret_sha256
RETURNING id, expires_at
