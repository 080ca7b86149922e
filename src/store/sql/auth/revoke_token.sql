-- auth/revoke_token: refuse a token from now on, by its id. Revoking one already revoked changes
-- nothing and returns no row. $1 jti, $2 the token's expiry, $3 who revoked it, $4 why.
INSERT INTO revoked_tokens (jti, expires_at, revoked_by, reason)
VALUES ($1, $2, $3, $4)
ON CONFLICT (jti) DO NOTHING
RETURNING jti
