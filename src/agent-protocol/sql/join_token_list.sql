-- agent-protocol/join_token_list: every join token, by expiry (what `fencer token list --join` shows, as
-- `kubeadm token list`): its id, description, the node it is bound to and its times; the secret is
-- kept only hashed.
SELECT id, description, node_name, created_at, expires_at, expires_at <= now() AS expired
FROM join_tokens
ORDER BY expires_at, id
