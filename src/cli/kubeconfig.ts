// fencer in a kubeconfig, through @kubernetes/client-node's KubeConfig: `fencer kubeconfig` writes
// one (a cluster per replica, the current context "fencer" on the first), so kubectl and client
// libraries need no --server; and the CLI finds its replicas there when told none. Loaded only
// when needed: the library takes most of a second to load.
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export const FENCER_CONTEXT = 'fencer';
const CLUSTER_PREFIX = 'fencer-replica-';

export interface KubeconfigUser {
  /** A bearer token (`fencer token create`), sent by kubectl as `Authorization: Bearer`. */
  token?: string;
  /**
   * The CA (PEM) the replicas' certificate is verified against. Given, the servers are written as
   * https: kubectl sends a token over TLS only, and fencer's CLI reads the CA from here too.
   */
  certificateAuthority?: string;
}

/**
 * A kubeconfig (JSON, which kubectl reads as YAML) whose current context is fencer's first
 * replica, with the user's token when given (the file then holds a secret: writeKubeconfig
 * makes it readable by its owner alone).
 */
export function kubeconfigFor(servers: readonly string[], user: KubeconfigUser = {}): string {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: servers.map((server, i) => ({
      name: `${CLUSTER_PREFIX}${i + 1}`,
      server: user.certificateAuthority ? server.replace(/^http:/, 'https:') : server,
      skipTLSVerify: false,
      ...(user.certificateAuthority ? { caData: Buffer.from(user.certificateAuthority).toString('base64') } : {}),
    })),
    users: [{ name: 'fencer', ...(user.token ? { token: user.token } : {}) }],
    contexts: servers.map((_, i) => ({
      name: i === 0 ? FENCER_CONTEXT : `${FENCER_CONTEXT}-${i + 1}`,
      cluster: `${CLUSTER_PREFIX}${i + 1}`,
      user: 'fencer',
    })),
    currentContext: FENCER_CONTEXT,
  });
  return kc.exportConfig();
}

/** How long the admin token `fencer cluster up` writes lives: the life of a demo cluster, and then some. */
export const ADMIN_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;

/**
 * What `fencer cluster up` is to do once authentication is wired: the cluster home's signing
 * key (made when there is none), an admin token (user `admin` in `system:masters`, which the
 * built-in binding makes cluster-admin) and `.fencer/kubeconfig` carrying it, mode 0600.
 */
export async function writeAdminKubeconfig(
  home: string,
  servers: readonly string[],
  opts: { issuer?: string; ttlMs?: number } = {},
): Promise<{ file: string; jti: string; expiresAt: Date }> {
  const { authFiles, ensureSigningKey } = await import('../auth/tokens/keys.js');
  const { mintToken } = await import('../auth/tokens/mint.js');
  const { DEFAULT_ISSUER } = await import('../auth/tokens/verify.js');
  const { MASTERS_GROUP } = await import('../auth/rbac/builtin.js');
  const files = authFiles(home);
  const key = await ensureSigningKey(files);
  const minted = await mintToken(key, {
    issuer: opts.issuer ?? DEFAULT_ISSUER,
    user: 'admin',
    groups: [MASTERS_GROUP],
    ttlMs: opts.ttlMs ?? ADMIN_TOKEN_TTL_MS,
  });
  writeKubeconfig(files.kubeconfig, servers, { token: minted.token });
  return { file: files.kubeconfig, jti: minted.jti, expiresAt: minted.expiresAt };
}

export function writeKubeconfig(file: string, servers: readonly string[], user: KubeconfigUser = {}): void {
  writeFileSync(file, `${kubeconfigFor(servers, user)}\n`, { mode: 0o600 });
  // writeFileSync's mode applies only to a file it creates; one holding a token must be private.
  if (user.token) chmodSync(file, 0o600);
}

/** The kubeconfig file kubectl would read ($KUBECONFIG's first entry, else ~/.kube/config), if it exists. */
export function kubeconfigFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const file = env.KUBECONFIG ? env.KUBECONFIG.split(':')[0]! : join(homedir(), '.kube', 'config');
  return file && existsSync(file) ? file : null;
}

/** fencer's replicas from a kubeconfig whose current context is fencer's; none otherwise. */
export function serversFromKubeconfig(file: string): string[] {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  if (kc.getCurrentContext() !== FENCER_CONTEXT) return [];
  return kc
    .getClusters()
    .filter((c) => c.name.startsWith(CLUSTER_PREFIX))
    .sort((a, b) => Number(a.name.slice(CLUSTER_PREFIX.length)) - Number(b.name.slice(CLUSTER_PREFIX.length)))
    .map((c) => c.server);
}
