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

/** The token of a kubeconfig's current context's user, when that context is fencer's. Read without the Kubernetes client (slow to load). */
export function kubeconfigToken(file: string): string | undefined {
  try {
    const config = YAML.parse(readFileSync(file, 'utf8')) as {
      'current-context'?: string;
      contexts?: Array<{ name: string; context?: { user?: string } }>;
      users?: Array<{ name: string; user?: { token?: string } }>;
    };
    if (config['current-context'] !== FENCER_CONTEXT) return undefined;
    const user = config.contexts?.find((c) => c.name === FENCER_CONTEXT)?.context?.user;
    return config.users?.find((u) => u.name === user)?.user?.token || undefined;
  } catch {
    return undefined; // not readable or not a kubeconfig: as if there were none
  }
}

/** The local cluster's serving certificate (src/simulator/credentials.ts), if it made one. */
export function localServingCert(home = fencerHome()): string | undefined {
  const file = join(authFiles(home).dir, 'serving-cert.pem');
  return existsSync(file) ? file : undefined;
}
