// What /metrics reads at scrape time: the cluster's state from the database, exported by the
// leader only (a standby exports none of these series, so a sum over the replicas counts each
// job and node once, and a failover moves them to the new leader), and every replica's own
// connection pools and open watch streams.
import { Gauge } from 'prom-client';
import type pg from 'pg';
import type { Db } from './db.js';
import { sql } from './sql.js';
import { registry } from '../metrics/registry.js';

export interface MetricsSources {
  db: Db;
  /** True while this replica leads. */
  leading: () => boolean;
  pools: Record<string, pg.Pool>;
  /** Open watch streams: nodes' assignment streams and Kubernetes watches. */
  watchStreams: () => { node: number; kube: number; dashboard: number };
}

let sources: MetricsSources | null = null;

/** Serves the state gauges from these sources (one replica per process). */
export function exportClusterState(from: MetricsSources): void {
  sources = from;
}

interface JobsRow {
  namespace: string;
  queue: string;
  phase: string;
  jobs: number;
  unschedulable: number;
  oldest_pending_seconds: number;
}

interface NodesRow {
  name: string;
  state: string;
  cpu_millis: number;
  memory_bytes: number;
  allocated_cpu_millis: number;
  allocated_memory_bytes: number;
}

/** One read per scrape, shared by the gauges below (each one's collect asks for it). */
let snapshot: { at: number; read: Promise<{ jobs: JobsRow[]; nodes: NodesRow[] } | null> } | null = null;
const SNAPSHOT_MS = 1000;

function clusterState(): Promise<{ jobs: JobsRow[]; nodes: NodesRow[] } | null> {
  const now = performance.now();
  if (snapshot && now - snapshot.at < SNAPSHOT_MS) return snapshot.read;
  const from = sources;
  const read = (async () => {
    if (!from || !from.leading()) return null;
    const [jobs, nodes] = await Promise.all([
      from.db.query<JobsRow>(sql('metrics/jobs')),
      from.db.query<NodesRow>(sql('metrics/nodes')),
    ]);
    return { jobs: jobs.rows, nodes: nodes.rows };
  })().catch(() => null); // a scrape while the database is away shows no state rather than failing
  snapshot = { at: now, read };
  return read;
}

/** A gauge set afresh from the cluster's state at each scrape (no series when not leading). */
function stateGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  fill: (gauge: Gauge<L>, state: { jobs: JobsRow[]; nodes: NodesRow[] }) => void,
): void {
  new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      const state = await clusterState();
      if (state) fill(this, state);
    },
  });
}

stateGauge(
  'fencer_jobs',
  'Jobs by namespace, queue and phase (the leader exports it).',
  ['namespace', 'queue', 'phase'],
  (g, s) => {
    // Pending and Running of every queue with jobs always exist, so a rule sees 0 rather than no series.
    for (const r of s.jobs)
      for (const phase of ['Pending', 'Running']) g.set({ namespace: r.namespace, queue: r.queue, phase }, 0);
    for (const r of s.jobs) g.set({ namespace: r.namespace, queue: r.queue, phase: r.phase }, r.jobs);
  },
);

// Both are there, 0, for every queue with jobs: an alert sees a value, not a missing series.
stateGauge(
  'fencer_jobs_unschedulable',
  'Pending jobs no Ready node could ever hold (reason Unschedulable), by namespace and queue (the leader exports it).',
  ['namespace', 'queue'],
  (g, s) => {
    for (const r of s.jobs) g.inc({ namespace: r.namespace, queue: r.queue }, r.unschedulable);
  },
);

stateGauge(
  'fencer_pending_oldest_seconds',
  'How long the pending job due longest has waited (since it was submitted, or due if later), by namespace and queue; 0 when none waits (the leader exports it).',
  ['namespace', 'queue'],
  (g, s) => {
    for (const r of s.jobs) g.inc({ namespace: r.namespace, queue: r.queue }, r.oldest_pending_seconds);
  },
);

stateGauge('fencer_nodes', 'Nodes by state, Ready or Dead (the leader exports it).', ['state'], (g, s) => {
  g.set({ state: 'Ready' }, 0);
  g.set({ state: 'Dead' }, 0);
  for (const n of s.nodes) g.inc({ state: n.state });
});

stateGauge('fencer_node_cpu_capacity_cores', "Each node's CPU capacity (the leader exports it).", ['node'], (g, s) => {
  for (const n of s.nodes) g.set({ node: n.name }, n.cpu_millis / 1000);
});

stateGauge(
  'fencer_node_cpu_allocated_cores',
  "CPU each node's active assignments hold (the leader exports it).",
  ['node'],
  (g, s) => {
    for (const n of s.nodes) g.set({ node: n.name }, n.allocated_cpu_millis / 1000);
  },
);

stateGauge(
  'fencer_node_memory_capacity_bytes',
  "Each node's memory capacity (the leader exports it).",
  ['node'],
  (g, s) => {
    for (const n of s.nodes) g.set({ node: n.name }, n.memory_bytes);
  },
);

stateGauge(
  'fencer_node_memory_allocated_bytes',
  "Memory each node's active assignments hold (the leader exports it).",
  ['node'],
  (g, s) => {
    for (const n of s.nodes) g.set({ node: n.name }, n.allocated_memory_bytes);
  },
);

new Gauge({
  name: 'fencer_db_pool_connections',
  help: "This replica's database connections by pool (api, liveness, decisions) and state: idle, busy, or waiting (requests queued for a connection).",
  labelNames: ['pool', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [pool, p] of Object.entries(sources?.pools ?? {})) {
      this.set({ pool, state: 'idle' }, p.idleCount);
      this.set({ pool, state: 'busy' }, p.totalCount - p.idleCount);
      this.set({ pool, state: 'waiting' }, p.waitingCount);
    }
  },
});

new Gauge({
  name: 'fencer_watch_streams',
  help: "Watch streams this replica has open, by kind: node (an agent's assignments), kube (a Kubernetes API watch) or dashboard (a page's change feed).",
  labelNames: ['kind'] as const,
  registers: [registry],
  collect() {
    const open = sources?.watchStreams() ?? { node: 0, kube: 0, dashboard: 0 };
    this.set({ kind: 'node' }, open.node);
    this.set({ kind: 'kube' }, open.kube);
    this.set({ kind: 'dashboard' }, open.dashboard);
  },
});
