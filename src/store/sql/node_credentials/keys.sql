-- node_credentials/keys: the node-credential signing keys, the newest (the one that signs) first.
SELECT kid, private_jwk, public_jwk FROM node_credential_keys ORDER BY created_at DESC, kid
