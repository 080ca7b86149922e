// Committed placements per second against PostgreSQL, with thousands of nodes simulated in this
// one process: each node is registered and opens its watch through the same store calls a
// replica makes for a real agent, so placement sees it as Ready and watching. The leader here
// is real too (the lease, the fenced transaction, the placement controller's reconcile), and
// every placement is committed with all its guards (epoch, unique index, capacity CHECK).
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { createPool } from '../store/db.js';
import { sql } from '../store/sql.js';
import { migrate } from '../store/migrate.js';
import { startEmbeddedPostgres } from '../store/embedded.js';
import { openWatch, registerNode } from '../agent-protocol/nodes-store.js';
import { submitJobs } from '../store/jobs.js';
import { jobsPlacedTwice } from '../store/history.js';
import { Lease } from '../lease/lease.js';
import { Placement } from '../placement/controller.js';
import { DEFAULT_TIMINGS, maxUnclaimedPerNode } from '../config.js';
import { withJobDefaults, type JobRequest } from '../domain/resources.js';
import { NODE_CPU_MILLIS, NODE_MEMORY_BYTES, generateWorkload } from './workload.js';

/** The simulated nodes never heartbeat: placement takes them as heard from (a day counts as recent). */
const SIMULATED_NODES_FRESH_MS = 86_400_000;

export interface CommitRateOptions {
  nodes: number;
  jobs: number;
  seed: number;
  /** Else DATABASE_URL, else an embedded PostgreSQL for the run. */
  databaseUrl?: string;
  log: (line: string) => void;
}

export interface CommitRateResult {
  nodes: number;
  jobs: number;
  placed: number;
  elapsedMs: number;
  rounds: Array<{ ms: number; placed: number }>;
  placedTwice: number;
}

export async function runCommitRateBench(opts: CommitRateOptions): Promise<CommitRateResult> {
  const given = opts.databaseUrl ?? process.env.DATABASE_URL;
  const embedded = given ? undefined : await startEmbeddedPostgres();
  const databaseUrl = given ?? embedded!.url;
  const db = createPool({
    databaseUrl,
    replica: 'bench',
    max: 8,
    idleInTxTimeoutMs: DEFAULT_TIMINGS.idleInTxTimeoutMs,
  });
  const logger = pino({ level: 'silent' });
  const lease = new Lease({
    databaseUrl,
    replica: 'bench',
    leaseMs: DEFAULT_TIMINGS.leaseMs,
    renewMs: DEFAULT_TIMINGS.renewMs,
    standbyPollMs: DEFAULT_TIMINGS.standbyPollMs,
    silentMs: DEFAULT_TIMINGS.deadAfterSilentMs,
    idleInTxTimeoutMs: DEFAULT_TIMINGS.idleInTxTimeoutMs,
    logger,
  });
  try {
    const client = await db.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
    opts.log(`registering ${opts.nodes} nodes, each with its watch open`);
    const names = Array.from({ length: opts.nodes }, (_, i) => `sim-${String(i + 1).padStart(5, '0')}`);
    await inParallel(names, 8, async (name) => {
      await registerNode(db, name, NODE_CPU_MILLIS, NODE_MEMORY_BYTES, { pool: 'default' });
      await openWatch(db, name, randomUUID(), 'bench');
    });
    opts.log(`submitting ${opts.jobs} jobs`);
    const workload = generateWorkload({ jobs: opts.jobs, seed: opts.seed, timeScale: 1 });
    const requests: JobRequest[] = workload.map((j) =>
      withJobDefaults({
        namespace: 'default',
        name: j.name,
        labels: {},
        spec: { resources: { cpu: `${j.cpuMillis}m`, memory: String(j.memoryBytes) }, duration: `${j.durationMs}ms` },
        cpuMillis: j.cpuMillis,
        memoryBytes: j.memoryBytes,
        durationMs: j.durationMs,
        nodeSelector: {},
        maxAttempts: 3,
      }),
    );
    for (let i = 0; i < requests.length; i += 2000) await submitJobs(db, requests.slice(i, i + 2000));

    const elected = new Promise<void>((resolve) => lease.once('elected', () => resolve()));
    lease.start();
    await elected;
    const placement = new Placement(
      db,
      lease,
      DEFAULT_TIMINGS.placementPassMs,
      maxUnclaimedPerNode(),
      SIMULATED_NODES_FRESH_MS,
    );
    const count = async () => (await db.query<{ n: number }>(sql('bench/assignment_count'))).rows[0]!.n;
    opts.log('placing');
    const rounds: CommitRateResult['rounds'] = [];
    let placed = 0;
    for (;;) {
      const roundStarted = performance.now();
      await placement.reconcile(logger);
      const now = await count();
      if (now === placed) break; // all placed, or no room left
      rounds.push({ ms: performance.now() - roundStarted, placed: now - placed });
      placed = now;
    }
    const elapsedMs = rounds.reduce((sum, r) => sum + r.ms, 0);
    return {
      nodes: opts.nodes,
      jobs: opts.jobs,
      placed,
      elapsedMs,
      rounds,
      placedTwice: (await jobsPlacedTwice(db)).length,
    };
  } finally {
    await lease.stop();
    await db.end();
    await embedded?.stop();
  }
}

async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}
