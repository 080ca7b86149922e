// `fencer bench throughput`: the job hot path, fencer side by side with graphile-worker on the
// same PostgreSQL in the same run, so that every figure is also a ratio.
//
// One PostgreSQL server (embedded, or the one DATABASE_URL names) and on it a fresh database,
// fencer_throughput. First fencer: a cluster (3 replicas, 10 process nodes, all far larger than
// the load) takes the loads of throughput-modes.ts through its API, and is measured around each
// load: CPU seconds by process kind (/proc), the leader's resident memory, leader changes (the
// lease's epoch), the worst event-loop delay of any replica and agent (their /metrics, read
// before a load, which resets it, and after), and what became of the jobs (the database); at the
// end the checker reads the history and the nodes' run logs. The cluster is stopped, then
// graphile-worker takes the same loads in this process (graphile-peer.ts), batched then
// unbatched, each on a fresh schema of the same database, measured the same way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Cluster } from '../simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../config.js';
import { createPool, type Db } from '../store/db.js';
import { sql } from '../store/sql.js';
import { startEmbeddedPostgres } from '../store/embedded.js';
import { check, verdictOf, type Verdict } from '../checker/check.js';
import { readCheckInput } from '../checker/read.js';
import { readStalls, samples } from './stalls.js';
import { bearer } from '../net/api-client.js';
import { cpuSecondsOf, ownCpuSeconds, postgresCpuSeconds, postmasterOf, residentMemory } from './process-usage.js';
import {
  BURST_PREFIX,
  SINGLE_PREFIX,
  STEADY_PREFIX,
  burst,
  singles,
  steady,
  warmUp,
  type BurstRun,
  type JobSystem,
  type SinglesRun,
  type SteadyStep,
} from './throughput-modes.js';
import { FencerJobs } from './throughput-fencer.js';
import { GraphileJobs, type GraphileFlavour } from './graphile-peer.js';

/** In the order `all` runs them: single on a cluster still idle, then the burst, then the steps. */
export const THROUGHPUT_MODES = ['single', 'burst', 'steady'] as const;
export type ThroughputMode = (typeof THROUGHPUT_MODES)[number];

export interface ThroughputOptions {
  modes: readonly ThroughputMode[];
  jobs: number;
  batch: number;
  inFlight: number;
  rates: readonly number[];
  stepSeconds: number;
  singles: number;
  singleGapMs: number;
  replicas: number;
  nodes: number;
  nodeCpu: string;
  nodeMemory: string;
  peers: readonly GraphileFlavour[];
  /** graphile-worker's concurrency. */
  peerConcurrency: number;
  /** Aborting it stops the run, its cluster and its database. */
  signal?: AbortSignal;
  log: (line: string) => void;
}

/** CPU seconds used during a load, by process kind; null for a kind not in the run or not on this machine. */
export interface CpuSeconds {
  replicas: number | null;
  agents: number | null;
  postgres: number | null;
  /** This process: the client, and graphile-worker's workers when it is the one measured. */
  bench: number;
}

export interface Usage {
  wallMs: number;
  cpu: CpuSeconds;
}

/** What became of a load's jobs in fencer's database. */
export interface Outcome {
  jobs: number;
  phases: Record<string, number>;
  assignments: number;
  unconfirmed: number;
  lost: number;
  extraAttempts: number;
}

/** What only fencer has, measured around a load. */
export interface FencerFacts {
  outcome: Outcome;
  epochBefore: number;
  epochAfter: number;
  leaderBefore: string | null;
  leaderAfter: string | null;
  /** The leader's (the one at the start) VmRSS, the most of samples every MEMORY_SAMPLE_MS of the load, and its VmHWM at the end. */
  leaderMemory: { sampledMaxBytes: number; peakBytes: number } | null;
  /** The leader's V8 heap and the memory outside it (Buffers, sockets) after the load, from its /metrics: what the RSS is made of. */
  leaderHeap: LeaderHeap | null;
  replicaLagMaxMs: number | null;
  agentLagMaxMs: number | null;
  selfFences: number;
  nodesDied: number;
}

export interface ModeRun<T> {
  run: T;
  usage: Usage;
  fencer?: FencerFacts;
}

export interface SystemRun {
  label: string;
  burst?: ModeRun<BurstRun>;
  steady?: ModeRun<SteadyStep[]>;
  single?: ModeRun<SinglesRun>;
}

export interface ThroughputResult {
  options: Omit<ThroughputOptions, 'log' | 'signal'>;
  database: 'embedded PostgreSQL' | 'DATABASE_URL';
  /** PostgreSQL's processes are on this machine, so its CPU was measured. */
  postgresMeasured: boolean;
  fencer: SystemRun;
  peers: SystemRun[];
  verdict: Verdict;
}

export async function runThroughputBench(opts: ThroughputOptions): Promise<ThroughputResult> {
  const server = await openDatabase(opts.log);
  try {
    const { fencer, verdict } = await runFencer(server, opts);
    const peers: SystemRun[] = [];
    for (const flavour of opts.peers) {
      opts.signal?.throwIfAborted();
      opts.log(`graphile-worker, ${flavour}, concurrency ${opts.peerConcurrency}`);
      const jobs = await GraphileJobs.start({
        connectionString: server.url,
        flavour,
        concurrency: opts.peerConcurrency,
        log: opts.log,
      });
      try {
        peers.push(
          await runModes(jobs, opts, (_prefix, body) => measure(() => cpuNow([], [], server.postmaster), body)),
        );
      } finally {
        await jobs.stop();
      }
    }
    const { log: _log, signal: _signal, ...options } = opts;
    return {
      options,
      database: server.embedded ? 'embedded PostgreSQL' : 'DATABASE_URL',
      postgresMeasured: server.postmaster !== null,
      fencer,
      peers,
      verdict,
    };
  } finally {
    await server.close();
  }
}

/** Runs a load (whose jobs are named `prefix`…) and measures it. */
type Measure = <T>(prefix: string, body: () => Promise<T>) => Promise<ModeRun<T>>;

/** Each load of opts.modes on the system, in order, each measured. */
async function runModes(system: JobSystem, opts: ThroughputOptions, measured: Measure): Promise<SystemRun> {
  const out: SystemRun = { label: system.label };
  const wait = { signal: opts.signal, log: opts.log };
  await warmUp(system, wait);
  for (const mode of opts.modes) {
    if (mode === 'single')
      out.single = await measured(SINGLE_PREFIX, () =>
        singles(system, { ...wait, count: opts.singles, gapMs: opts.singleGapMs }),
      );
    if (mode === 'burst')
      out.burst = await measured(BURST_PREFIX, () =>
        burst(system, { ...wait, jobs: opts.jobs, batch: opts.batch, inFlight: opts.inFlight }),
      );
    if (mode === 'steady')
      out.steady = await measured(STEADY_PREFIX, () =>
        steady(system, { ...wait, rates: opts.rates, stepSeconds: opts.stepSeconds }),
      );
  }
  return out;
}

/** Wall time and CPU by kind around body. */
async function measure<T>(cpu: () => CpuSeconds, body: () => Promise<T>): Promise<ModeRun<T>> {
  const before = cpu();
  const startedAt = Date.now();
  const run = await body();
  const wallMs = Date.now() - startedAt;
  const after = cpu();
  const minus = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);
  return {
    run,
    usage: {
      wallMs,
      cpu: {
        replicas: minus(after.replicas, before.replicas),
        agents: minus(after.agents, before.agents),
        postgres: minus(after.postgres, before.postgres),
        bench: after.bench - before.bench,
      },
    },
  };
}

function cpuNow(replicas: readonly number[], agents: readonly number[], postmaster: number | null): CpuSeconds {
  return {
    replicas: replicas.length ? cpuSecondsOf(replicas) : null,
    agents: agents.length ? cpuSecondsOf(agents) : null,
    postgres: postmaster === null ? null : postgresCpuSeconds(postmaster),
    bench: ownCpuSeconds(),
  };
}

async function runFencer(server: Database, opts: ThroughputOptions): Promise<{ fencer: SystemRun; verdict: Verdict }> {
  const home = mkdtempSync(join(tmpdir(), 'fencer-throughput-'));
  opts.log(
    `fencer: starting ${opts.replicas} replicas and ${opts.nodes} nodes of ${opts.nodeCpu} CPU / ${opts.nodeMemory} (process runtime; home ${home})`,
  );
  let cluster: Cluster | undefined;
  const db = createPool({ databaseUrl: server.url, replica: 'bench', max: 3 });
  try {
    cluster = await Cluster.start({
      replicas: opts.replicas,
      nodes: opts.nodes,
      nodeCpu: opts.nodeCpu,
      nodeMemory: opts.nodeMemory,
      home,
      runtime: 'process',
      databaseUrl: server.url,
      signal: opts.signal,
      proxies: false,
      readyTimeoutMs: 5 * 60_000,
      timings: DEFAULT_TIMINGS,
    });
    // Every client of this run (the API client, metrics reads) acts as the cluster's admin, over TLS.
    cluster.exportClientEnv();
    const system = new FencerJobs(cluster.replicaUrls, db, opts.signal);
    const running = cluster;
    const fencer = await runModes(system, opts, (prefix, body) =>
      measureFencer(running, db, server.postmaster, prefix, body),
    );
    opts.log("fencer: running the checker over the history and the nodes' run logs");
    const verdict = verdictOf(check(await readCheckInput(db, [join(home, 'nodes')])));
    return { fencer, verdict };
  } finally {
    await db.end();
    await cluster?.stop();
    if (process.env.FENCER_KEEP_BENCH_HOME) opts.log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
}

const MEMORY_SAMPLE_MS = 250;

/** measure(), and what only fencer has: the leader, its memory, the event loops, the jobs' outcome. */
async function measureFencer<T>(
  cluster: Cluster,
  db: Db,
  postmaster: number | null,
  prefix: string,
  body: () => Promise<T>,
): Promise<ModeRun<T>> {
  const replicaPids = cluster.replicaNames.flatMap((n) => cluster.pid(n) ?? []);
  const agentPids = cluster.nodeNames.flatMap((n) => cluster.pid(n) ?? []);
  const since = new Date();
  const leaseBefore = await lease(db);
  // Scraping resets the event-loop delay figures: from here they cover the load alone.
  const stallsBefore = await readStalls(cluster.replicaUrls, cluster.agentMetricsUrls, cluster.fetch);
  const leaderPid = leaseBefore.holder ? cluster.pid(leaseBefore.holder) : undefined;
  let sampledMaxBytes = 0;
  const sample = () => {
    const memory = leaderPid === undefined ? null : residentMemory(leaderPid);
    if (memory) sampledMaxBytes = Math.max(sampledMaxBytes, memory.rssBytes);
  };
  const sampling = setInterval(sample, MEMORY_SAMPLE_MS);
  let measured: ModeRun<T>;
  try {
    measured = await measure(() => cpuNow(replicaPids, agentPids, postmaster), body);
  } finally {
    clearInterval(sampling);
  }
  sample();
  const stallsAfter = await readStalls(cluster.replicaUrls, cluster.agentMetricsUrls, cluster.fetch);
  const leaseAfter = await lease(db);
  const peak = leaderPid === undefined ? null : residentMemory(leaderPid);
  const leaderHeap = leaseBefore.holder ? await heapOf(cluster, leaseBefore.holder) : null;
  const outcome = (await db.query<Outcome>(sql('bench/throughput_outcome'), [prefix])).rows[0]!;
  const nodesDied = (await db.query<{ n: number }>(sql('bench/throughput_nodes_died'), [since])).rows[0]!.n;
  return {
    ...measured,
    fencer: {
      outcome,
      epochBefore: leaseBefore.epoch,
      epochAfter: leaseAfter.epoch,
      leaderBefore: leaseBefore.holder,
      leaderAfter: leaseAfter.holder,
      leaderMemory: peak ? { sampledMaxBytes, peakBytes: peak.peakBytes } : null,
      leaderHeap,
      replicaLagMaxMs: stallsAfter.replicaLagMaxMs,
      agentLagMaxMs: stallsAfter.agentLagMaxMs,
      selfFences: stallsAfter.selfFences - stallsBefore.selfFences,
      nodesDied,
    },
  };
}

export interface LeaderHeap {
  totalBytes: number;
  usedBytes: number;
  externalBytes: number;
}

async function heapOf(cluster: Cluster, replica: string): Promise<LeaderHeap | null> {
  const text = await cluster
    .fetch(`${cluster.replicaUrl(replica)}/metrics`, { headers: bearer() })
    .then((r) => r.text())
    .catch(() => '');
  const one = (metric: string) => samples(text, `fencer_process_nodejs_${metric}`)[0];
  const [totalBytes, usedBytes, externalBytes] = [
    one('heap_size_total_bytes'),
    one('heap_size_used_bytes'),
    one('external_memory_bytes'),
  ];
  if (totalBytes === undefined || usedBytes === undefined || externalBytes === undefined) return null;
  return { totalBytes, usedBytes, externalBytes };
}

async function lease(db: Db): Promise<{ holder: string | null; epoch: number }> {
  return (await db.query<{ holder: string | null; epoch: number }>(sql('bench/throughput_lease'))).rows[0]!;
}

interface Database {
  /** fencer_throughput on the server. */
  url: string;
  embedded: boolean;
  /** PostgreSQL's postmaster on this machine; null when the server runs elsewhere. */
  postmaster: number | null;
  /** Stops an embedded server; else drops the database (kept with FENCER_KEEP_BENCH_HOME). */
  close(): Promise<void>;
}

/** A fresh fencer_throughput database on the server DATABASE_URL names, else on an embedded PostgreSQL started for the run. */
async function openDatabase(log: (line: string) => void): Promise<Database> {
  const given = process.env.DATABASE_URL;
  const embedded = given ? undefined : await startEmbeddedPostgres();
  const adminUrl = given ?? embedded!.adminUrl;
  const admin = async (name: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql(name));
    } finally {
      await client.end();
    }
  };
  try {
    await admin('bench/throughput_drop_database');
    await admin('bench/throughput_create_database');
    const url = new URL(adminUrl);
    url.pathname = '/fencer_throughput';
    const probe = new pg.Client({ connectionString: url.toString() });
    await probe.connect();
    const backend = (await probe.query<{ pid: number }>(sql('bench/throughput_backend_pid'))).rows[0]!.pid;
    const postmaster = postmasterOf(backend);
    await probe.end();
    if (postmaster === null) log('PostgreSQL runs on another machine: its CPU is not measured');
    return {
      url: url.toString(),
      embedded: embedded !== undefined,
      postmaster,
      async close() {
        // An embedded server goes with its data; a server given to us keeps only what we ask.
        if (embedded) await embedded.stop();
        else if (process.env.FENCER_KEEP_BENCH_HOME) log(`kept the database ${url.pathname.slice(1)}`);
        else
          await admin('bench/throughput_drop_database').catch((err: Error) =>
            log(`could not drop the database: ${err.message}`),
          );
      },
    };
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
}
