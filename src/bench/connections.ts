// PostgreSQL's server connections and their memory with many nodes, without and with PgBouncer
// (docs/connections.md). For each setting a fresh cluster (3 replicas, many nodes hosted by few
// agent processes); pg_stat_activity sampled at rest and under a small job load, each backend's
// RSS and PSS read from /proc (same machine), and PgBouncer's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../simulator/local-cluster.js';
import { DEFAULT_TIMINGS, type Timings } from '../config.js';
import { delay, eventually } from '../lifecycle.js';
import { createPool, type Pool } from '../store/db.js';
import { sql } from '../store/sql.js';
import { ApiClient, TRY_NEXT_AFTER_500 } from '../net/api-client.js';
import { proportionalMemory } from './process-usage.js';
import { readStalls, type Stalls } from './stalls.js';

export const CONNECTION_SETTINGS = ['direct', 'pgbouncer'] as const;
export type ConnectionSetting = (typeof CONNECTION_SETTINGS)[number];

export interface ConnectionsOptions {
  /** The settings to run, each on a fresh cluster, in this order. */
  settings: readonly ConnectionSetting[];
  replicas: number;
  nodes: number;
  nodesPerProcess: number;
  /** PgBouncer's server sessions per replica. */
  poolSize: number;
  restSeconds: number;
  loadSeconds: number;
  jobsPerSecond: number;
  /** Nodes' heartbeat interval; the node timings of DEFAULT_TIMINGS scale with it (nodeTimings). */
  heartbeatMs: number;
  /** Niceness of the agent processes (0: as the replicas). */
  agentNice: number;
  sampleMs: number;
  signal?: AbortSignal;
  log: (line: string) => void;
}

/** One look at the server: sessions by who and what, and what their processes hold. */
export interface ConnectionSample {
  /** `direct idle`, `pooled active`, …: replicas' sessions by path and pg_stat_activity's state. */
  byKind: Record<string, number>;
  sessions: number;
  rssBytes: number;
  pssBytes: number;
  /** PgBouncer's own process, when it runs. */
  bouncer: { rssBytes: number; pssBytes: number } | null;
}

export interface ConnectionsRun {
  setting: ConnectionSetting;
  /** The sample with the most sessions of each stretch. */
  rest: ConnectionSample;
  load: ConnectionSample;
  submitted: number;
  succeeded: number;
  /** Nodes not Ready at the end (a node that fenced itself or was declared dead). */
  notReady: number;
  /** Read from every process's /metrics once the cluster was up: what the start cost. */
  up: Stalls;
  /** And at the end: counters since the start, event-loop delays of the measured stretches. */
  stalls: Stalls;
}

export async function runConnectionsBench(opts: ConnectionsOptions): Promise<ConnectionsRun[]> {
  const runs: ConnectionsRun[] = [];
  for (const setting of opts.settings) runs.push(await runOne(setting, opts));
  return runs;
}

async function runOne(setting: ConnectionSetting, opts: ConnectionsOptions): Promise<ConnectionsRun> {
  const home = mkdtempSync(join(tmpdir(), `fencer-connections-${setting}-`));
  opts.log(`${setting}: starting ${opts.replicas} replicas and ${opts.nodes} nodes (home ${home})`);
  const cluster = await Cluster.start({
    replicas: opts.replicas,
    nodes: opts.nodes,
    nodesPerProcess: opts.nodesPerProcess,
    nodeNice: opts.agentNice || undefined,
    proxies: false,
    home,
    timings: nodeTimings(opts.heartbeatMs),
    pgbouncer: setting === 'pgbouncer' ? { poolSize: opts.poolSize } : false,
    readyTimeoutMs: 15 * 60_000,
    signal: opts.signal,
  });
  cluster.exportClientEnv();
  const db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'bench', max: 1 });
  try {
    // Also resets the event-loop delays: the last reading covers the measured stretches alone.
    const up = await readStalls(cluster.replicaUrls, cluster.agentMetricsUrls, cluster.fetch);
    const bouncerPid = cluster.pgbouncer?.pid;
    opts.log(`${setting}: ready; at rest for ${opts.restSeconds} s`);
    const rest = await sampleFor(db, bouncerPid, opts.restSeconds * 1000, opts.sampleMs);
    opts.log(`${setting}: ${opts.jobsPerSecond} jobs/s for ${opts.loadSeconds} s`);
    const client = new ApiClient(cluster.replicaUrls, { timeoutMs: 10_000, tryNextStatuses: TRY_NEXT_AFTER_500 });
    let submitted = 0;
    const submitting = (async () => {
      for (let second = 0; second < opts.loadSeconds; second++) {
        const started = Date.now();
        const manifests = Array.from({ length: opts.jobsPerSecond }, (_, i) => ({
          apiVersion: 'fencer.dev/v1',
          kind: 'Job',
          metadata: { name: `c-${second}-${i}` },
          spec: { resources: { cpu: '100m', memory: '64Mi' }, duration: '2s' },
        }));
        await client.submitJobs(manifests);
        submitted += manifests.length;
        await delay(Math.max(0, 1000 - (Date.now() - started)), opts.signal);
      }
    })();
    const load = await sampleFor(db, bouncerPid, opts.loadSeconds * 1000, opts.sampleMs);
    await submitting;
    const succeeded = await eventually(
      async () => {
        const { rows } = await db.query<{ phase: string; n: number }>(sql('jobs/phase_counts'));
        const done = rows.find((r) => r.phase === 'Succeeded')?.n ?? 0;
        return done === submitted ? done : null;
      },
      { timeoutMs: 180_000, intervalMs: 500, what: `all ${submitted} jobs succeeded (${setting})` },
    );
    const status = await cluster.status();
    const notReady = status.nodes.filter((n) => n.phase !== 'Ready').length;
    const stalls = await readStalls(cluster.replicaUrls, cluster.agentMetricsUrls, cluster.fetch);
    opts.log(`${setting}: ${succeeded}/${submitted} jobs succeeded, ${notReady} nodes not Ready`);
    return { setting, rest, load, submitted, succeeded, notReady, up, stalls };
  } finally {
    await db.end();
    await cluster.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * DEFAULT_TIMINGS with the nodes' clocks (heartbeat, death rule, watch silence) scaled to a
 * heartbeat of `heartbeatMs`, as Kubernetes' kubelets renew their Lease every 10 s: on one small
 * machine a thousand simulated nodes heartbeating every second take more CPU than the replicas.
 */
export function nodeTimings(heartbeatMs: number): Timings {
  const scale = heartbeatMs / DEFAULT_TIMINGS.heartbeatMs;
  const scaled = (ms: number) => Math.round(ms * scale);
  return {
    ...DEFAULT_TIMINGS,
    heartbeatMs,
    deadAfterSilentMs: scaled(DEFAULT_TIMINGS.deadAfterSilentMs),
    deadAfterDisconnectMs: scaled(DEFAULT_TIMINGS.deadAfterDisconnectMs),
    disconnectedQuietMs: scaled(DEFAULT_TIMINGS.disconnectedQuietMs),
    watchSilenceMs: scaled(DEFAULT_TIMINGS.watchSilenceMs),
  };
}

async function sampleFor(db: Pool, bouncerPid: number | undefined, ms: number, everyMs: number) {
  const until = Date.now() + ms;
  let most: ConnectionSample | undefined;
  do {
    const sample = await sample1(db, bouncerPid);
    if (!most || sample.sessions > most.sessions) most = sample;
    await delay(everyMs);
  } while (Date.now() < until);
  return most;
}

async function sample1(db: Pool, bouncerPid: number | undefined): Promise<ConnectionSample> {
  const { rows } = await db.query<{ pid: number; application_name: string; state: string }>(sql('bench/connections'));
  const byKind: Record<string, number> = {};
  let rssBytes = 0;
  let pssBytes = 0;
  for (const row of rows) {
    const path = row.application_name.endsWith(':pooled')
      ? 'pooled'
      : row.application_name.startsWith('fencer:')
        ? 'direct'
        : 'other';
    const kind = `${path} ${row.state || 'unknown'}`;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    const memory = proportionalMemory(row.pid);
    rssBytes += memory?.rssBytes ?? 0;
    pssBytes += memory?.pssBytes ?? 0;
  }
  const bouncer = bouncerPid === undefined ? null : proportionalMemory(bouncerPid);
  return { byKind, sessions: rows.length, rssBytes, pssBytes, bouncer };
}
