// Which replicas the CLI talks to, and its client of them (src/net/api-client.ts): a replica that
// is dead, frozen or partitioned away is simply skipped, the next one answers the same.
import { userInfo } from 'node:os';
import { readClusterState } from '../simulator/state.js';
import { ApiClient, normalizeServer } from '../net/api-client.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:7070';

/**
 * The CLI's client of these replicas: says who asks (the history keeps it) and tells the user
 * when it waits, as a server asked (a 429), before sending again.
 */
export function cliClient(servers: readonly string[]): ApiClient {
  return new ApiClient(servers, {
    headers: { 'x-remote-user': actor() },
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

/** Who the user is, for the history of what they ask (a replay, a retry): FENCER_USER, else the login name. */
function actor(): string {
  if (process.env.FENCER_USER) return process.env.FENCER_USER;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
