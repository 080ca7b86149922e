-- agent-protocol/join_token_check: whether a join token may register a node now. $1 id, $2 secret. No row: no
-- such token (or another secret); valid false: it expired; node_name: the one name it registers
-- (NULL: any).
SELECT expires_at > now() AS valid, expires_at, node_name
FROM join_tokens
WHERE id = $1 AND secret_sha256 = sha256(convert_to($2, 'UTF8'))
