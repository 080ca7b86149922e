// Node credentials (docs/security.md, "Node identity"): short-lived JWTs the replicas sign for
// the node processes that registered, bound to the node's name, incarnation and generation.
//
// Why the replicas hold this key and not the operator's signing key: a credential is minted at
// every registration and renewed with heartbeats, by whichever replica took the request, so every
// replica needs a key that signs — and the operator's key mints any identity, system:masters
// included, which no replica should hold. This key is the cluster's own, made by the first
// replica that finds none and kept in PostgreSQL (node_credential_keys, migration 0029), where
// every replica reads it and nobody has to hand it out; whoever can read that table can already
// rewrite every row the credentials protect. Its tokens have their own issuer
// (NODE_CREDENTIAL_ISSUER), and the verifier takes from that issuer nothing but a node
// credential (`system:node:NAME` in `system:nodes` with an incarnation and a generation): a stolen
// copy of this key speaks for nodes, never for a user.
import { importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../store/db.js';
import { insertNodeCredentialKey, nodeCredentialKeys } from '../store/node-credential-keys.js';
import {
  GENERATION_EXTRA,
  INCARNATION_EXTRA,
  NODE_CREDENTIAL_ISSUER,
  NODE_CREDENTIAL_TTL_MS,
  type NodeIdentity,
} from '../domain/node-identity.js';
import { NODE_USER_PREFIX, NODES_GROUP } from '../domain/rbac.js';
import { generateSigningKey, type SigningKey } from './tokens/keys.js';
import { mintToken, type MintedToken } from './tokens/mint.js';
import { localKeySet, type KeySet, type TokenIssuer } from './tokens/verify.js';

export class NodeCredentials {
  private key: SigningKey | undefined;
  private keys: KeySet | undefined;

  constructor(private readonly db: Db) {}

  /** Reads the cluster's key, making it first when there is none. Before the API serves. */
  async load(): Promise<void> {
    let rows = await nodeCredentialKeys(this.db);
    if (rows.length === 0) {
      const { privateJwk, publicJwk } = await generateSigningKey('EdDSA');
      await insertNodeCredentialKey(this.db, publicJwk.kid!, { ...privateJwk }, { ...publicJwk });
      rows = await nodeCredentialKeys(this.db);
    }
    const newest = rows[0]!;
    const privateJwk = newest.private_jwk as JWK;
    this.key = {
      kid: newest.kid,
      alg: 'EdDSA',
      privateKey: (await importJWK(privateJwk, 'EdDSA')) as CryptoKey,
      publicJwk: newest.public_jwk as JWK,
    };
    this.keys = localKeySet({ keys: rows.map((r) => r.public_jwk) }, 'node_credential_keys');
  }

  /** The issuer the replicas' verifier trusts for node credentials (its keys once load() ran). */
  get issuer(): TokenIssuer {
    return {
      issuer: NODE_CREDENTIAL_ISSUER,
      claims: 'node',
      keys: (header, token) => {
        if (!this.keys) throw new Error('node credential keys not loaded yet');
        return this.keys(header, token);
      },
    };
  }

  /** A credential for this process of the node, valid NODE_CREDENTIAL_TTL_MS. */
  async mint(identity: NodeIdentity): Promise<MintedToken> {
    if (!this.key) throw new Error('node credential keys not loaded yet');
    return mintToken(this.key, {
      issuer: NODE_CREDENTIAL_ISSUER,
      user: `${NODE_USER_PREFIX}${identity.node}`,
      groups: [NODES_GROUP],
      extra: { [INCARNATION_EXTRA]: [identity.incarnation], [GENERATION_EXTRA]: [String(identity.generation)] },
      ttlMs: NODE_CREDENTIAL_TTL_MS,
    });
  }
}
