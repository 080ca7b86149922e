-- auth/revoked_tokens: the ids of revoked tokens not yet expired, for a replica's cache. No parameters.
SELECT jti, expires_at FROM revoked_tokens WHERE expires_at > now() ORDER BY jti
