-- auth/prune_revoked: forget revocations of tokens that expired more than the verifier's clock
-- skew ago (it refuses them on their expiry alone). $1 the skew in seconds.
DELETE FROM revoked_tokens WHERE expires_at < now() - make_interval(secs => $1)
