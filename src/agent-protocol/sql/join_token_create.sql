-- agent-protocol/join_token_create: a join token for registering nodes (migrations 0029, 0030). $1 id (6 of
-- [a-z0-9]), $2 the secret (16 of [a-z0-9]), kept only as its sha256, $3 its lifetime in
-- milliseconds, $4 a description, $5 the one node name it registers (NULL: any). The same token
-- again changes nothing (its expiry and name stay); an id already taken by another secret comes
-- back with no row.
INSERT INTO join_tokens (id, secret_sha256, description, expires_at, node_name)
VALUES ($1, sha256(convert_to($2, 'UTF8')), $4, now() + $3::bigint * interval '1 millisecond', $5)
ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id
WHERE join_tokens.secret_sha256 = EXCLUDED.secret_sha256
RETURNING id, expires_at, node_name
