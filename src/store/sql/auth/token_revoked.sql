-- auth/token_revoked: whether the token with this id was revoked. $1 jti.
SELECT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = $1) AS revoked
