// The cluster's node-credential signing keys (migration 0029): every replica signs and verifies
// node credentials with them (src/auth/node-credentials.ts).
import type { Db } from './db.js';
import { sql } from './sql.js';

export interface NodeCredentialKeyRow {
  kid: string;
  private_jwk: Record<string, unknown>;
  public_jwk: Record<string, unknown>;
}

/** The keys, the one that signs first. */
export async function nodeCredentialKeys(db: Db): Promise<NodeCredentialKeyRow[]> {
  return (await db.query<NodeCredentialKeyRow>(sql('node_credentials/keys'))).rows;
}

/** Stores a key unless one is there already (another replica's, made at the same time). */
export async function insertNodeCredentialKey(
  db: Db,
  kid: string,
  privateJwk: Record<string, unknown>,
  publicJwk: Record<string, unknown>,
): Promise<void> {
  await db.query(sql('node_credentials/insert_key'), [kid, privateJwk, publicJwk]);
}
