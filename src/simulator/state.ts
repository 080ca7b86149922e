// The state file a detached simulated cluster leaves in FENCER_HOME (default ./.fencer), so
// that later commands (status, kill, freeze, down, and the resource commands' default server)
// can find its processes. The supervisor rewrites it whenever a process is (re)started.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface ProcessEntry {
  name: string;
  pid: number;
}

export interface ClusterState {
  runtime: 'process' | 'docker';
  /** Without its password (withoutPassword): databaseUrlOf() puts it back. */
  databaseUrl: string;
  /** Where the embedded PostgreSQL's password is (mode 0600), when the cluster started one. */
  databasePasswordFile?: string;
  /** With `--postgres ha`: etcd, the Patroni members and HAProxy, by pid. */
  ha?: HaState;
  supervisorPid: number;
  startedAt: string;
  replicas: Array<ProcessEntry & { url: string }>;
  nodes: Array<ProcessEntry & { logFile: string; metricsUrl?: string; proxyPid?: number }>;
}

export function fencerHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.FENCER_HOME ?? '.fencer');
}

export function statePath(home = fencerHome()): string {
  return join(home, 'cluster.json');
}

export function readClusterState(home = fencerHome()): ClusterState | null {
  const path = statePath(home);
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8')) as ClusterState;
}

export function writeClusterState(state: ClusterState, home = fencerHome()): void {
  mkdirSync(home, { recursive: true });
  // It names files and processes, not secrets; still its owner's alone.
  writeAtomically(statePath(home), JSON.stringify(state, null, 2), 0o600);
  writeAtomically(join(home, 'prometheus-targets.json'), JSON.stringify(prometheusTargets(state), null, 2));
}

/** Readers never see half a file. */
function writeAtomically(path: string, text: string, mode = 0o644): void {
  writeFileSync(`${path}.tmp`, text, { mode });
  chmodSync(`${path}.tmp`, mode); // a leftover tmp file would have kept its old mode
  renameSync(`${path}.tmp`, path);
}

/** The cluster's database URL with its password: from its password file, else DATABASE_URL's. */
export function databaseUrlOf(state: ClusterState, env: NodeJS.ProcessEnv = process.env): string {
  const url = new URL(state.databaseUrl);
  if (state.databasePasswordFile) {
    url.password = encodeURIComponent(readFileSync(state.databasePasswordFile, 'utf8').trim());
    return url.toString();
  }
  return env.DATABASE_URL ?? state.databaseUrl;
}

/** A PostgreSQL URL fit to print or store: its password, if any, left out. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

/**
 * Every replica's and agent's /metrics as Prometheus' file-based discovery reads them
 * (deploy/prometheus/prometheus.yml): one group per process, labelled with what it is.
 */
export function prometheusTargets(state: ClusterState): Array<{ targets: string[]; labels: Record<string, string> }> {
  const agents = new Map<string, string[]>();
  for (const n of state.nodes)
    if (n.metricsUrl)
      agents.set(new URL(n.metricsUrl).host, [...(agents.get(new URL(n.metricsUrl).host) ?? []), n.name]);
  return [
    ...state.replicas.map((r) => ({
      targets: [new URL(r.url).host],
      labels: { component: 'replica', replica: r.name },
    })),
    ...[...agents].map(([host, nodes]) => ({ targets: [host], labels: { component: 'agent', agent: nodes[0]! } })),
  ];
}

// The HA database's part of the state (src/simulator/ha-postgres.ts starts it).

/** Patroni's failover timing (bootstrap.dcs), stated in docs/ha.md beside what it gives. */
export interface FailoverSettings {
  /** Seconds the leader key lives without a renewal: the longest a dead primary keeps it. */
  ttl: number;
  /** Seconds between two passes of each Patroni's loop. */
  loopWait: number;
  /** Seconds Patroni retries etcd and PostgreSQL before a primary demotes itself. */
  retryTimeout: number;
}

export interface HaMember {
  name: string;
  patroniPid: number;
  /** Patroni's REST API: GET /primary answers 200 on the primary only. */
  restUrl: string;
  pgPort: number;
  dataDir: string;
}

/** What the state file keeps of an HA database: enough to find and signal every process. */
export interface HaState {
  /** The fencer database through HAProxy (always the current primary), without its password. */
  url: string;
  haproxyPid: number;
  etcd: Array<{ name: string; pid: number }>;
  members: HaMember[];
  settings: FailoverSettings;
}
