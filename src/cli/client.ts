// Which replicas the CLI talks to, and its client of them (src/net/api-client.ts): a replica that
// is dead, frozen or partitioned away is simply skipped, the next one answers the same.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { fencerHome, readClusterState } from '../simulator/state.js';
import { readAdminToken } from '../simulator/credentials.js';
import { authFiles } from '../auth/tokens/keys.js';
import { ApiClient, normalizeServer } from '../net/api-client.js';
import { caFromEnv, readCa } from '../net/tls.js';

/** The context `fencer kubeconfig` and `fencer cluster up` write (src/cli/kubeconfig.ts). */
const FENCER_CONTEXT = 'fencer';

export const DEFAULT_SERVER = 'http://127.0.0.1:7070';

/**
 * The CLI's client of these replicas: sends its token (whose subject the history names) and tells
 * the user when it waits, as a server asked (a 429), before sending again.
 */
export function cliClient(servers: readonly string[]): ApiClient {
  return new ApiClient(servers, {
    token: tokenFor(),
    ca: caFor(),
    onRetry: (why, waitMs) =>
      process.stderr.write(`${why} (waiting ${Math.ceil(waitMs / 1000)} s, as the server asked)\n`),
  });
}

/**
 * The replicas a command talks to: --server, else FENCER_SERVER, else the kubeconfig kubectl would
 * read when its current context is fencer's (`fencer kubeconfig`), else the local cluster's, else
 * the default.
 */
export async function serversFor(opt?: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  if (splitServers(opt).length === 0 && splitServers(env.FENCER_SERVER).length === 0) {
    const { kubeconfigFile, serversFromKubeconfig } = await import('./kubeconfig.js');
    const file = kubeconfigFile(env);
    const servers = file ? serversFromKubeconfig(file).map(normalizeServer) : [];
    if (servers.length > 0) return servers;
  }
  return resolveServers(opt, env);
}

export function resolveServers(
  opt?: string,
  env: NodeJS.ProcessEnv = process.env,
  clusterReplicas: () => string[] = localClusterReplicas,
): string[] {
  for (const candidate of [opt, env.FENCER_SERVER]) {
    const servers = splitServers(candidate);
    if (servers.length > 0) return servers;
  }
  const replicas = clusterReplicas().map(normalizeServer);
  return replicas.length > 0 ? replicas : [DEFAULT_SERVER];
}

function localClusterReplicas(): string[] {
  try {
    return readClusterState()?.replicas.map((r) => r.url) ?? [];
  } catch {
    // A half-written or stale state file must not stop a command that names no server:
    // the default still has a chance to answer.
    return [];
  }
}

function splitServers(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(normalizeServer);
}

/**
 * The bearer token the CLI sends: FENCER_TOKEN, else the user's of the kubeconfig kubectl would
 * read when its current context is fencer's, else the admin token of the local cluster's home
 * (what `fencer cluster up` made). None: the replica answers 401 unless it runs without auth.
 */
export function tokenFor(env: NodeJS.ProcessEnv = process.env, home = fencerHome(env)): string | undefined {
  if (env.FENCER_TOKEN) return env.FENCER_TOKEN;
  const file = env.KUBECONFIG ? env.KUBECONFIG.split(':')[0]! : join(homedir(), '.kube', 'config');
  return (file && existsSync(file) ? kubeconfigToken(file) : undefined) ?? readAdminToken(home) ?? undefined;
}

/**
 * The CA the CLI verifies https replicas against (src/net/tls.ts): FENCER_CA, else the one of the
 * kubeconfig kubectl would read when its current context is fencer's, else the local cluster's
 * (what `fencer cluster up` made); none: the system's CAs.
 */
export function caFor(env: NodeJS.ProcessEnv = process.env, home = fencerHome(env)): string | undefined {
  const fromEnv = caFromEnv(env);
  if (fromEnv) return fromEnv;
  const file = env.KUBECONFIG ? env.KUBECONFIG.split(':')[0]! : join(homedir(), '.kube', 'config');
  const fromKubeconfig = file && existsSync(file) ? fencerContext(file)?.ca : undefined;
  if (fromKubeconfig) return fromKubeconfig;
  const local = localCa(home);
  return local ? readCa(local, 'the local cluster') : undefined;
}

/** The token of a kubeconfig's current context's user, when that context is fencer's. Read without the Kubernetes client (slow to load). */
export function kubeconfigToken(file: string): string | undefined {
  return fencerContext(file)?.token;
}

/** What a kubeconfig whose current context is fencer's gives the CLI: its user's token, its cluster's CA. */
function fencerContext(file: string): { token?: string; ca?: string } | undefined {
  try {
    const config = YAML.parse(readFileSync(file, 'utf8')) as {
      'current-context'?: string;
      contexts?: Array<{ name: string; context?: { user?: string; cluster?: string } }>;
      users?: Array<{ name: string; user?: { token?: string } }>;
      clusters?: Array<{
        name: string;
        cluster?: { 'certificate-authority-data'?: string; 'certificate-authority'?: string };
      }>;
    };
    if (config['current-context'] !== FENCER_CONTEXT) return undefined;
    const context = config.contexts?.find((c) => c.name === FENCER_CONTEXT)?.context;
    const cluster = config.clusters?.find((c) => c.name === context?.cluster)?.cluster;
    const caData = cluster?.['certificate-authority-data'];
    const caFile = cluster?.['certificate-authority'];
    return {
      token: config.users?.find((u) => u.name === context?.user)?.user?.token || undefined,
      ca: caData
        ? Buffer.from(caData, 'base64').toString('utf8')
        : caFile
          ? readCa(caFile, `${file}: certificate-authority`)
          : undefined,
    };
  } catch {
    return undefined; // not readable or not a kubeconfig: as if there were none
  }
}

/** The local cluster's CA (src/simulator/cluster-tls.ts), if it made one. */
export function localCa(home = fencerHome()): string | undefined {
  const file = join(authFiles(home).dir, 'ca-cert.pem');
  return existsSync(file) ? file : undefined;
}
