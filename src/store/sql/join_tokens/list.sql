-- join_tokens/list: every join token, by expiry (what `fencer token list --join` shows, as
-- `kubeadm token list`): its id, description and times; the secret is kept only hashed.
SELECT id, description, created_at, expires_at, expires_at <= now() AS expired
FROM join_tokens
ORDER BY expires_at, id
