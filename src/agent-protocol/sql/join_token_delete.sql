-- agent-protocol/join_token_delete: a join token withdrawn (nodes that joined with it keep their credentials
-- until those expire). $1 id.
DELETE FROM join_tokens WHERE id = $1 RETURNING id
