-- 0029_node_identity: who may speak for a node (docs/security.md, "Node identity").
-- A join token (kubeadm's bootstrap token form, `id.secret`) lets a new agent process register;
-- only a hash of its secret is kept, with an expiry. A registration is answered with a short-lived
-- node credential, a JWT the replicas sign with the cluster's node-credential key (kept here, so
-- every replica signs and verifies with the same one and nothing else has to be handed to them);
-- it names the node's incarnation and generation, which every heartbeat, watch and report
-- checks against the node's row in the statement it already runs.
CREATE TABLE join_tokens (
  id            text PRIMARY KEY CHECK (id ~ '^[a-z0-9]{6}$'),
  -- sha256 of the secret half (the 16 characters after the dot): a database dump yields no token.
  secret_sha256 bytea NOT NULL CHECK (length(secret_sha256) = 32),
  description   text NOT NULL DEFAULT '',
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);

CREATE TABLE node_credential_keys (
  kid         text PRIMARY KEY CHECK (kid <> ''),
  -- The private JWK (Ed25519) the replicas sign node credentials with, and its public half.
  private_jwk jsonb NOT NULL,
  public_jwk  jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- A heartbeat from a node's credential: as fencer_heartbeat(node) (migration 0018), but only while
-- the credential's incarnation and generation are the node's (NULL: not checked, a replica
-- without authentication). 'Superseded': a newer process of the node registered; nothing written.
CREATE FUNCTION fencer_heartbeat(node text, node_incarnation uuid, node_generation bigint) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    node_state text;
BEGIN
    IF EXISTS (SELECT 1 FROM nodes WHERE name = node
               AND ((node_incarnation IS NOT NULL AND incarnation IS DISTINCT FROM node_incarnation)
                    OR (node_generation IS NOT NULL AND generation IS DISTINCT FROM node_generation))) THEN
        RETURN 'Superseded';
    END IF;
    INSERT INTO node_heartbeats (name, at)
    SELECT node, now() WHERE EXISTS (SELECT 1 FROM nodes WHERE name = node)
    ON CONFLICT (name) DO UPDATE SET at = GREATEST(node_heartbeats.at, EXCLUDED.at);
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT state INTO node_state FROM nodes WHERE name = node;
    RETURN node_state;
END
$$;
