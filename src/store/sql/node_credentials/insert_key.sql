-- node_credentials/insert_key: the cluster's node-credential signing key, made by the first
-- replica that finds none (node_credentials/keys). Two replicas starting at once may both make
-- one: the first commit wins, the other's insert does nothing, and both read the winner.
-- $1 kid, $2 private JWK, $3 public JWK.
INSERT INTO node_credential_keys (kid, private_jwk, public_jwk)
SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM node_credential_keys)
ON CONFLICT (kid) DO NOTHING
