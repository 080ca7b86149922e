// `fencer bench packing`: the seeded backlog (workload.ts) on a real cluster (3 replicas, nodes
// as Docker containers, or processes when no engine is here), measured from the database.
//
// The backlog goes in as requests of SUBMIT_BATCH jobs, back to back, spread over the replicas;
// the clock starts when the first is answered, so the time the rest take counts against the
// finish time (the lower bound has every job pending from the start). One request of 10,000
// held the replica that took it for seconds (parsing and validating it blocks its event loop,
// inserting it took 20,000 round trips), long enough to cost it the lease; both are fixed
// (src/api/validation/off-loop.ts, jobs/insert.sql), and requests of 500 stay the way a client
// should send a backlog. Use is sampled twice a second from the nodes' allocated CPU and memory.
import { holdOverhead, type HoldOverhead } from './hold-overhead.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { Cluster } from '../simulator/local-cluster.js';
import { benchRuntime } from '../simulator/docker-runtime.js';
import { createPool } from '../store/db.js';
import { sql } from '../store/sql.js';
import { check, verdictOf, type Verdict } from '../checker/check.js';
import { readCheckInput } from '../checker/read.js';
import { delay } from '../lifecycle.js';
import { ApiClient, TRY_NEXT_AFTER_500 } from '../net/api-client.js';
import { policyName, type Policy } from '../placement/policies.js';
import { NODE_CPU_MILLIS, NODE_MEMORY_BYTES, generateWorkload, lowerBoundMs, type WorkloadJob } from './workload.js';
import { simulatePacking, type SimulationResult } from './packing-simulation.js';
import { readPlacementTimings, type LatencySummary } from './placement-metrics.js';
import { readStalls, type Stalls } from './stalls.js';

export interface PackingOptions {
  jobs: number;
  nodes: number;
  /** Nodes per agent process or container (Cluster's nodesPerProcess). */
  nodesPerProcess: number;
  replicas: number;
  seed: number;
  timeScale: number;
  runtime: 'docker' | 'process';
  policy: Policy;
  /** Also replay the workload in the simulation under every policy. */
  compare: readonly Policy[];
  progress: boolean;
  /** Else DATABASE_URL, else an embedded PostgreSQL for the run. */
  databaseUrl?: string;
  /** Aborting it stops the run and its cluster (containers included). */
  signal?: AbortSignal;
  log: (line: string) => void;
}

export interface UseSample {
  atMs: number;
  cpuUse: number;
  memoryUse: number;
  pending: number;
  finished: number;
}

export interface PackingResult {
  options: Omit<PackingOptions, 'log' | 'signal'>;
  /** The runtime that ran, and why when it is not the one asked for. */
  runtime: 'docker' | 'process';
  runtimeNote?: string;
  lowerBoundMs: number;
  /** From the first request's answer to the last's. */
  submitMs: number;
  submitRequests: number;
  finishMs: number;
  cpuUseWhileWaiting: number;
  memoryUseWhileWaiting: number;
  samples: UseSample[];
  decide: LatencySummary;
  round: LatencySummary;
  stalls: Stalls;
  /** The independent checker over the history and the nodes' run logs (chaos/check). */
  verdict: Verdict;
  phases: Record<string, number>;
  overhead: HoldOverhead;
  simulations: SimulationResult[];
}

const SAMPLE_MS = 500;

export async function runPackingBench(opts: PackingOptions): Promise<PackingResult> {
  const workload = generateWorkload({ jobs: opts.jobs, seed: opts.seed, timeScale: opts.timeScale });
  const simulations = opts.compare.map((policy) => {
    const result = simulatePacking(workload, opts.nodes, policy);
    opts.log(
      `simulated ${policyName(policy)}: finish ${(result.finishMs / result.lowerBoundMs).toFixed(3)} × lower bound`,
    );
    return result;
  });
  const { runtime, runtimeNote } = await benchRuntime(opts.runtime, opts.log);
  const home = mkdtempSync(join(tmpdir(), 'fencer-packing-'));
  opts.log(`starting ${opts.replicas} replicas and ${opts.nodes} nodes (${runtime}; home ${home})`);
  const cluster = await Cluster.start({
    replicas: opts.replicas,
    nodes: opts.nodes,
    nodeCpu: String(NODE_CPU_MILLIS / 1000),
    nodeMemory: `${NODE_MEMORY_BYTES / 1024 ** 3}Gi`,
    home,
    runtime,
    databaseUrl: opts.databaseUrl,
    signal: opts.signal,
    proxies: false,
    nodesPerProcess: opts.nodesPerProcess,
    readyTimeoutMs: 15 * 60_000,
    env: { FENCER_PLACEMENT_POLICY: `${opts.policy.ordering}+${opts.policy.fit}` },
  });
  // Every client of this run (the API client, metrics reads) acts as the cluster's admin, over TLS.
  cluster.exportClientEnv();
  const db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'bench', max: 2 });
  try {
    opts.log(`submitting ${workload.length} jobs in requests of ${SUBMIT_BATCH}`);
    const acceptedAt = await submitBacklog(cluster.replicaUrls, workload);
    const submittedAt = Date.now();
    const samples = await sampleUntilDone(db, acceptedAt, opts);
    const finishedAt = (await db.query<{ at: Date }>(sql('bench/last_finished_at'))).rows[0]!.at.getTime();
    const waiting = samples.filter((s) => s.pending > 0);
    const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
    const phases = Object.fromEntries(
      (await db.query<{ phase: string; n: number }>(sql('jobs/phase_counts'))).rows.map((r) => [r.phase, r.n]),
    );
    // Stalls first: a scrape resets the event-loop delay figures (the histograms are cumulative).
    const stalls = await readStalls(cluster.replicaUrls, cluster.agentMetricsUrls, cluster.fetch);
    const timings = await readPlacementTimings(cluster.replicaUrls, cluster.fetch);
    const { log: _log, signal: _signal, ...options } = opts;
    return {
      options,
      runtime,
      runtimeNote,
      lowerBoundMs: lowerBoundMs(workload, opts.nodes),
      submitMs: submittedAt - acceptedAt,
      submitRequests: Math.ceil(workload.length / SUBMIT_BATCH),
      finishMs: finishedAt - acceptedAt,
      cpuUseWhileWaiting: mean(waiting.map((s) => s.cpuUse)),
      memoryUseWhileWaiting: mean(waiting.map((s) => s.memoryUse)),
      samples,
      decide: timings.decide,
      round: timings.round,
      stalls,
      verdict: verdictOf(check(await readCheckInput(db, [join(home, 'nodes')]))),
      phases,
      overhead: await holdOverhead(db),
      simulations,
    };
  } finally {
    await db.end();
    await cluster.stop();
    if (process.env.FENCER_KEEP_BENCH_HOME) opts.log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
}

const SUBMIT_BATCH = 500;

/** Submits the backlog in batches; returns when the first batch was accepted (Date.now()). */
async function submitBacklog(replicaUrls: string[], workload: readonly WorkloadJob[]): Promise<number> {
  let firstAcceptedAt: number | undefined;
  for (let first = 0; first < workload.length; first += SUBMIT_BATCH) {
    const batch = workload.slice(first, first + SUBMIT_BATCH);
    await submitBatch(rotate(replicaUrls, first / SUBMIT_BATCH), batch);
    firstAcceptedAt ??= Date.now();
  }
  return firstAcceptedAt ?? Date.now();
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function submitBatch(replicaUrls: string[], workload: readonly WorkloadJob[]): Promise<void> {
  const manifests = workload.map((j) => ({
    apiVersion: 'fencer.dev/v1',
    kind: 'Job',
    metadata: { name: j.name, labels: { kind: j.kind } },
    spec: { resources: { cpu: `${j.cpuMillis}m`, memory: String(j.memoryBytes) }, duration: `${j.durationMs}ms` },
  }));
  // A batch of 500 can wait behind another on a busy replica: the timeout only says "try another".
  await new ApiClient(replicaUrls, { timeoutMs: 60_000, tryNextStatuses: TRY_NEXT_AFTER_500 }).submitJobs(manifests);
}

async function sampleUntilDone(
  db: ReturnType<typeof createPool>,
  since: number,
  opts: PackingOptions,
): Promise<UseSample[]> {
  const totalCpu = opts.nodes * NODE_CPU_MILLIS;
  const totalMemory = opts.nodes * NODE_MEMORY_BYTES;
  const bar = opts.progress
    ? new SingleBar(
        { format: 'jobs finished [{bar}] {value}/{total} | {eta_formatted} left | CPU {cpu}% memory {memory}%' },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(opts.jobs, 0, { cpu: '0', memory: '0' });
  const samples: UseSample[] = [];
  try {
    for (;;) {
      const row = (
        await db.query<{ cpu: number; memory: number; pending: number; finished: number }>(sql('bench/packing_sample'))
      ).rows[0]!;
      const sample = {
        atMs: Date.now() - since,
        cpuUse: row.cpu / totalCpu,
        memoryUse: row.memory / totalMemory,
        pending: row.pending,
        finished: row.finished,
      };
      samples.push(sample);
      bar?.update(row.finished, { cpu: (sample.cpuUse * 100).toFixed(1), memory: (sample.memoryUse * 100).toFixed(1) });
      if (row.finished >= opts.jobs) return samples;
      opts.signal?.throwIfAborted();
      await delay(SAMPLE_MS);
    }
  } finally {
    bar?.stop();
  }
}
