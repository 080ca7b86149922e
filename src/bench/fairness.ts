// `fencer bench fairness`: fair share across queues on a real cluster (3 replicas, embedded
// PostgreSQL, nodes as processes or containers), measured from the database afterwards.
//
// The flood case, run twice on a fresh cluster and database each, fair share on and off: tenant
// A (namespace tenant-a) floods its jobs at once; tenants B and C (tenant-b, tenant-c) each
// submit one job every 200 ms from when the flood is in until it has only a few seconds of work
// left to place. Every job is in its namespace's `default` queue and takes 1 CPU / 1 GiB; the
// trickle's jobs run 1 s each, the flood's 0.5–1.5 s (mean 1 s), so on 10 nodes of 4 CPU a job
// ends every 25 ms cluster-wide on average and a fair scheduler can hand each trickle job the
// next room that frees. (Flood jobs of one length, started together, would end together run
// after run, freeing room in bursts a second apart for the first half minute or so. Trickle
// jobs of one length keep each tenant's own jobs in arrival order: most-work-first would
// otherwise let a longer job of the same tenant pass a shorter one.) A job's wait is its first
// Running row in the history minus its creation, both by the database's clock.
//
// The weights case, fair share on: two queues of one namespace with weights 3 and 1, both
// flooded at once with enough jobs to keep both waiting for the time asked; what each queue's
// runs accrue in every 30 s window (1 s apart) of that time, and the ratio.
//
// Each run ends with the checker over its history and the nodes' run logs.
import { holdOverhead, type HoldOverhead } from './hold-overhead.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Cluster } from '../simulator/local-cluster.js';
import { benchRuntime } from '../simulator/docker-runtime.js';
import { DEFAULT_TIMINGS } from '../config.js';
import { createPool, type Db, type Pool } from '../store/db.js';
import { sql } from '../store/sql.js';
import { applyQueue } from '../fair-share/store.js';
import { check, verdictOf, type Verdict } from '../checker/check.js';
import { readCheckInput } from '../checker/read.js';
import { delay } from '../lifecycle.js';
import { seededRandom } from '../seeded-random.js';
import { JOB_CPU_MILLIS, jobManifest, SUBMIT_BATCH, submitBacklog, Trickle } from './fairness-submit.js';
import { readPlacementTimings, type LatencySummary } from './placement-metrics.js';
import {
  floodFinish,
  shareWindows,
  useWhileWaiting,
  waitStats,
  type FloodFinish,
  type JobTiming,
  type ShareResult,
  type UseSample,
  type UseStats,
  type WaitStats,
} from './fairness-measure.js';
import { bearer } from '../net/api-client.js';

export { JOB_CPU_MILLIS, JOB_MEMORY_BYTES } from './fairness-submit.js';

export type FairnessCase = 'flood' | 'weights';

export interface FairnessOptions {
  cases: readonly FairnessCase[];
  /** Tenant A's jobs, submitted at once. */
  flood: number;
  /** Each of tenant B and C submits one job this often. */
  trickleMs: number;
  nodes: number;
  /** CPUs per node (memory: 4 GiB per CPU, never the tighter resource). */
  nodeCpu: number;
  /** Every job's mean run time (1 CPU / 1 GiB each). */
  durationMs: number;
  /**
   * The flood's durations are drawn uniformly within ± this share of durationMs (seeded); 0: all
   * equal. The trickle's jobs and the weights case's run durationMs each.
   */
  spread: number;
  seed: number;
  /** The weights case keeps both queues waiting about this long. */
  weightsSeconds: number;
  windowSeconds: number;
  replicas: number;
  runtime: 'process' | 'docker';
  nodesPerProcess: number;
  /** A PostgreSQL server to make each run's database on; else DATABASE_URL; else an embedded one per run. */
  databaseUrl?: string;
  /** Aborting it stops the run and its cluster. */
  signal?: AbortSignal;
  log: (line: string) => void;
}

export const TENANTS = { flood: 'tenant-a', trickle: ['tenant-b', 'tenant-c'] } as const;
export const WEIGHTS = {
  namespace: 'weights',
  queues: [
    { name: 'weight-3', weight: 3 },
    { name: 'weight-1', weight: 1 },
  ],
} as const;
/** The trickle stops once the flood has less than this many seconds of the cluster's work left to place. */
export const TRICKLE_STOP_SECONDS = 3;
const SAMPLE_MS = 500;
const PROGRESS_MS = 10_000;

export interface RunFacts {
  /** What the run was: a fresh cluster and database each. */
  fairShare: boolean;
  runtime: 'process' | 'docker';
  runtimeNote?: string;
  samples: UseSample[];
  use: UseStats;
  phases: Record<string, number>;
  verdict: Verdict;
  /** Wall time of the run, cluster start to last job finished. */
  wallMs: number;
  /** From the leader's /metrics. */
  rounds: { decide: LatencySummary; round: LatencySummary };
  hold: HoldOverhead;
}

export interface FloodFacts {
  samples: UseSample[];
  waits: Record<string, WaitStats>;
  /** Per tenant, [seconds since the flood's first job was created, wait in seconds], by creation. */
  waitPoints: Record<string, Array<[number, number]>>;
  finish: FloodFinish;
  trickleSubmitted: number;
  trickleRefused: number;
}
export type FloodRun = FloodFacts & RunFacts;

export interface WeightsFacts {
  samples: UseSample[];
  /** Jobs submitted per queue. */
  jobs: Record<string, number>;
  shares: ShareResult;
}
export type WeightsRun = WeightsFacts & RunFacts;

export interface FairnessResult {
  options: Omit<FairnessOptions, 'log' | 'signal'>;
  on?: FloodRun;
  off?: FloodRun;
  weights?: WeightsRun;
}

export async function runFairnessBench(opts: FairnessOptions): Promise<FairnessResult> {
  const { log: _log, signal: _signal, ...options } = opts;
  const result: FairnessResult = { options };
  if (opts.cases.includes('flood')) {
    result.on = await withCluster(opts, true, (run) => floodCase(run, opts));
    result.off = await withCluster(opts, false, (run) => floodCase(run, opts));
  }
  if (opts.cases.includes('weights')) result.weights = await withCluster(opts, true, (run) => weightsCase(run, opts));
  return result;
}

interface Run {
  cluster: Cluster;
  db: Db;
  fairShare: boolean;
  clusterCpuMillis: number;
  /** Jobs the cluster finishes per second when full. */
  jobsPerSecond: number;
}

async function withCluster<F extends { samples: UseSample[] }>(
  opts: FairnessOptions,
  fairShare: boolean,
  body: (run: Run) => Promise<F>,
): Promise<F & RunFacts> {
  const { runtime, runtimeNote } = await benchRuntime(opts.runtime, opts.log);
  const startedAt = Date.now();
  const home = mkdtempSync(join(tmpdir(), 'fencer-fairness-'));
  const database = await runDatabase(opts.databaseUrl ?? process.env.DATABASE_URL, fairShare);
  opts.log(
    `fair share ${fairShare ? 'on' : 'off'}: starting ${opts.replicas} replicas and ${opts.nodes} nodes of ${opts.nodeCpu} CPU (${runtime}; home ${home})`,
  );
  let cluster: Cluster | undefined;
  let db: Pool | undefined;
  try {
    cluster = await Cluster.start({
      replicas: opts.replicas,
      nodes: opts.nodes,
      nodeCpu: String(opts.nodeCpu),
      nodeMemory: `${opts.nodeCpu * 4}Gi`,
      home,
      runtime,
      databaseUrl: database?.url,
      signal: opts.signal,
      proxies: false,
      nodesPerProcess: opts.nodesPerProcess,
      readyTimeoutMs: 5 * 60_000,
      timings: DEFAULT_TIMINGS,
      env: { FENCER_FAIR_SHARE: fairShare ? 'on' : 'off' },
    });
    // Every client of this run (the API client, metrics reads) acts as the cluster's admin, over TLS.
    cluster.exportClientEnv();
    db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'bench', max: 3 });
    const clusterCpuMillis = opts.nodes * opts.nodeCpu * 1000;
    const facts = await body({
      cluster,
      db,
      fairShare,
      clusterCpuMillis,
      jobsPerSecond: clusterCpuMillis / JOB_CPU_MILLIS / (opts.durationMs / 1000),
    });
    const phases = Object.fromEntries(
      (await db.query<{ phase: string; n: number }>(sql('jobs/phase_counts'))).rows.map((r) => [r.phase, r.n]),
    );
    const wallMs = Date.now() - startedAt;
    const rounds = await readPlacementTimings(cluster.replicaUrls, cluster.fetch);
    if (process.env.FENCER_KEEP_BENCH_HOME) await saveMetrics(cluster, home);
    const hold = await holdOverhead(db);
    const verdict = verdictOf(check(await readCheckInput(db, [join(home, 'nodes')])));
    opts.log(`fair share ${fairShare ? 'on' : 'off'}: done; checker ${verdict.ok ? 'clean' : 'found VIOLATIONS'}`);
    return {
      ...facts,
      fairShare,
      runtime,
      runtimeNote,
      use: useWhileWaiting(facts.samples),
      phases,
      verdict,
      wallMs,
      rounds,
      hold,
    };
  } finally {
    await db?.end();
    await cluster?.stop();
    if (process.env.FENCER_KEEP_BENCH_HOME) {
      opts.log(`kept ${home}${database ? ` and ${database.url}` : ''}`);
    } else {
      await database?.drop();
      rmSync(home, { recursive: true, force: true });
    }
  }
}

/** Each replica's /metrics as the run left them, into the kept home (metrics/<replica>.txt). */
async function saveMetrics(cluster: Cluster, home: string): Promise<void> {
  mkdirSync(join(home, 'metrics'), { recursive: true });
  for (const name of cluster.replicaNames) {
    const text = await cluster.fetch(`${cluster.replicaUrl(name)}/metrics`, { headers: bearer() }).then(
      (r) => r.text(),
      (err: Error) => `# ${err.message}\n`,
    );
    writeFileSync(join(home, 'metrics', `${name}.txt`), text);
  }
}

/** A database of its own for each run on a server given to us; none (the cluster starts an embedded one) otherwise. */
async function runDatabase(
  serverUrl: string | undefined,
  fairShare: boolean,
): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  if (!serverUrl) return undefined;
  const name = `fencer_fairness_${fairShare ? 'on' : 'off'}_${Date.now().toString(36)}`;
  /** Runs the statement the named .sql file writes for the database's name. */
  const admin = async (writer: 'bench/create_database_statement' | 'bench/drop_database_statement') => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      const { statement } = (await client.query<{ statement: string }>(sql(writer), [name])).rows[0]!;
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin('bench/create_database_statement');
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin('bench/drop_database_statement') };
}

async function floodCase(run: Run, opts: FairnessOptions): Promise<FloodFacts> {
  const random = seededRandom(opts.seed);
  const duration = () => Math.round(opts.durationMs * (1 - opts.spread + 2 * opts.spread * random()));
  const flood = Array.from({ length: opts.flood }, (_, i) =>
    jobManifest(TENANTS.flood, 'default', `flood-${i + 1}`, duration()),
  );
  opts.log(`submitting tenant A's flood of ${opts.flood} jobs in requests of ${SUBMIT_BATCH}`);
  const clockStart = await submitBacklog(run.cluster.replicaUrls, flood);
  const stopBelow = Math.ceil(run.jobsPerSecond * TRICKLE_STOP_SECONDS);
  opts.log(
    `flood in; tenants B and C submit a job every ${opts.trickleMs} ms each until the flood has fewer than ${stopBelow} jobs to place`,
  );
  const trickle = new Trickle(run.cluster.replicaUrls, TENANTS.trickle, opts.trickleMs, opts.durationMs);
  const trickling = trickle.run();
  let samples: UseSample[];
  try {
    samples = await sample(run, clockStart, opts, (s) => {
      if ((s.pending[`${TENANTS.flood}/default`] ?? 0) < stopBelow) trickle.stop();
      return trickle.stopped;
    });
  } finally {
    trickle.stop();
    await trickling;
  }
  const jobs = (await jobTimings(run.db, 'namespace')).map((j) => ({ ...j, ...trickle.times.get(j.key) }));
  const of = (tenant: string) => jobs.filter((j) => j.group === tenant);
  const floodJobs = of(TENANTS.flood);
  const start = Math.min(...floodJobs.map((j) => j.createdMs));
  const tenants = [TENANTS.flood, ...TENANTS.trickle];
  return {
    samples,
    waits: Object.fromEntries(tenants.map((t) => [t, waitStats(of(t))])),
    waitPoints: Object.fromEntries(
      tenants.map((t) => [
        t,
        of(t)
          .filter((j) => j.runningMs !== null)
          .sort((a, b) => a.createdMs - b.createdMs)
          .map((j): [number, number] => [(j.createdMs - start) / 1000, (j.runningMs! - j.createdMs) / 1000]),
      ]),
    ),
    finish: floodFinish(
      floodJobs,
      jobs.filter((j) => j.group !== TENANTS.flood),
      run.clusterCpuMillis,
    ),
    trickleSubmitted: trickle.submitted,
    trickleRefused: trickle.refused,
  };
}

async function weightsCase(run: Run, opts: FairnessOptions): Promise<WeightsFacts> {
  for (const q of WEIGHTS.queues) {
    await applyQueue(run.db, {
      namespace: WEIGHTS.namespace,
      name: q.name,
      labels: {},
      spec: { weight: q.weight },
      weight: q.weight,
      concurrencyLimit: null,
      cpuLimitMillis: null,
      memoryLimitBytes: null,
      strictLanes: false,
    });
  }
  // Enough for both to wait the time asked, the lighter queue a little more so that the heavier
  // one runs out first; submitted interleaved 3:1, so neither is ahead in arrival order.
  const total = Math.ceil(run.jobsPerSecond * opts.weightsSeconds);
  const [heavy, light] = WEIGHTS.queues;
  const heavyJobs = Math.ceil((total * heavy.weight) / (heavy.weight + light.weight));
  const lightJobs = Math.ceil(((total - heavyJobs) * 21) / 20);
  const manifests: object[] = [];
  for (let h = 0, l = 0; h < heavyJobs || l < lightJobs;) {
    for (let k = 0; k < heavy.weight && h < heavyJobs; k++)
      manifests.push(jobManifest(WEIGHTS.namespace, heavy.name, `${heavy.name}-${++h}`, opts.durationMs));
    if (l < lightJobs)
      manifests.push(jobManifest(WEIGHTS.namespace, light.name, `${light.name}-${++l}`, opts.durationMs));
  }
  opts.log(
    `weights: ${heavyJobs} jobs in queue ${heavy.name} (weight ${heavy.weight}) and ${lightJobs} in ${light.name} (weight ${light.weight}), submitted together`,
  );
  const clockStart = await submitBacklog(run.cluster.replicaUrls, manifests);
  const samples = await sample(run, clockStart, opts, () => true);
  const jobs = await jobTimings(run.db, 'queue');
  return {
    samples,
    jobs: { [heavy.name]: heavyJobs, [light.name]: lightJobs },
    shares: shareWindows(jobs, [heavy.name, light.name], opts.windowSeconds * 1000, 1000),
  };
}

/**
 * Samples CPU use and what waits every SAMPLE_MS until every job has finished and `more`
 * (told each sample) says nothing more will be submitted.
 */
async function sample(
  run: Run,
  since: number,
  opts: FairnessOptions,
  more: (s: UseSample) => boolean,
): Promise<UseSample[]> {
  const samples: UseSample[] = [];
  let lastProgress = Date.now();
  for (;;) {
    const row = (
      await run.db.query<{ cpu: number; pending: Record<string, number> | null; unfinished: number }>(
        sql('bench/fairness_sample'),
      )
    ).rows[0]!;
    const s: UseSample = {
      atMs: Date.now() - since,
      cpuUse: row.cpu / run.clusterCpuMillis,
      pending: row.pending ?? {},
    };
    samples.push(s);
    const submitting = !more(s);
    if (Date.now() - lastProgress >= PROGRESS_MS) {
      lastProgress = Date.now();
      const waiting =
        Object.entries(s.pending)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none';
      opts.log(
        `  ${(s.atMs / 1000).toFixed(0)} s: CPU ${(s.cpuUse * 100).toFixed(1)} %, pending: ${waiting}; ${row.unfinished} unfinished`,
      );
    }
    if (!submitting && row.unfinished === 0) return samples;
    opts.signal?.throwIfAborted();
    await delay(SAMPLE_MS);
  }
}

async function jobTimings(db: Db, groupBy: 'namespace' | 'queue'): Promise<Array<JobTiming & { key: string }>> {
  const rows = (
    await db.query<{
      key: string;
      grp: string;
      created: number;
      placed: number | null;
      running: number | null;
      finished: number | null;
      cpu: number;
      duration: number;
    }>(sql('bench/fairness_job_timings'), [groupBy])
  ).rows;
  return rows.map((r) => ({
    key: r.key,
    group: r.grp,
    createdMs: r.created,
    placedMs: r.placed,
    runningMs: r.running,
    finishedMs: r.finished,
    cpuMillis: r.cpu,
    durationMs: r.duration,
  }));
}
