// graphile-worker as the throughput benchmark's peer: the same loads (throughput-modes.ts) on the
// same PostgreSQL, in this process. A job is enqueued with addJobs (one statement per batch, as
// its docs advise for bulk), its handler waits fencer's job duration (1 ms) and records when it
// started and returned; graphile-worker deletes a job once it has completed, so the jobs left
// in its table are the ones not ended. Two flavours, both with `concurrency` jobs at once:
//   batched   — its documented batching (worker.graphile.org/docs/performance): a local queue of
//               500 jobs fetched and locked at once, completions written together;
//   unbatched — its defaults: each worker fetches its next job and writes its completion alone.
// A job's start latency is its handler's start minus its created_at (the enqueue transaction's
// now(), as fencer's created_at is): one clock, this machine's.
import { createRequire } from 'node:module';
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { createPool, type Pool } from '../store/db.js';
import { sql } from '../store/sql.js';
import { delay } from '../lifecycle.js';
import type { JobTiming } from './throughput-stats.js';
import { JOB_SHAPE, type JobSystem, type SubmitReceipt } from './throughput-modes.js';

export const GRAPHILE_FLAVOURS = ['batched', 'unbatched'] as const;
export type GraphileFlavour = (typeof GRAPHILE_FLAVOURS)[number];

/** The graphile-worker installed (a devDependency), for the results. */
export const GRAPHILE_VERSION = (createRequire(import.meta.url)('graphile-worker/package.json') as { version: string })
  .version;

const TASK = 'noop';
/** The batching of graphile-worker's own performance page. */
const BATCHING = { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 };

export interface GraphileOptions {
  connectionString: string;
  flavour: GraphileFlavour;
  /** Jobs run at once by the one worker pool. */
  concurrency: number;
  log: (line: string) => void;
}

/**
 * A pool for graphile-worker: createPool's idle clients already ignore errors (a server going
 * away); a checked-out one (its LISTEN session) must too, as graphile-worker asks of a pool it is given.
 */
function graphilePool(databaseUrl: string, use: string, max: number): Pool {
  const pool = createPool({ databaseUrl, replica: `bench-graphile-${use}`, max });
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** A job's name up to its number: its mode's prefix (burst-, steady-r400-, single-). */
const prefixOf = (name: string): string => name.slice(0, name.lastIndexOf('-') + 1);

export class GraphileJobs implements JobSystem {
  readonly label: string;
  private readonly ran = new Map<string, JobTiming>();
  private readonly submitted = new Map<string, number>();
  private readonly startedByPrefix = new Map<string, number>();
  private runner: Runner | undefined;
  private utils: WorkerUtils | undefined;
  private stopping: Promise<void> | undefined;

  /**
   * Its connections are ours: graphile-worker ends a pool it made without waiting and unhooks its
   * error handler first, so a server stopped right after would throw from an idle client.
   */
  private constructor(
    private readonly opts: GraphileOptions,
    /** The benchmark's reads (how many jobs are left). */
    private readonly pool: Pool,
    /** The worker pool's connections; its docs: 10 or concurrency + 2, whichever is larger. */
    private readonly workerPool: Pool = graphilePool(
      opts.connectionString,
      'worker',
      Math.max(10, opts.concurrency + 2),
    ),
    /** Enqueueing's connections (addJobs), a few batches at once. */
    private readonly enqueuePool: Pool = graphilePool(opts.connectionString, 'enqueue', 4),
  ) {
    this.label = `graphile-worker ${opts.flavour}`;
  }

  /** A worker pool on a fresh schema, ready for jobs. */
  static async start(opts: GraphileOptions): Promise<GraphileJobs> {
    const jobs = new GraphileJobs(
      opts,
      createPool({ databaseUrl: opts.connectionString, replica: 'bench-graphile', max: 2 }),
    );
    try {
      await jobs.pool.query(sql('bench/graphile_drop_schema'));
      const logger = new Logger(() => (level, message) => {
        if ((level as string) === 'error' || (level as string) === 'warning')
          opts.log(`graphile-worker ${level}: ${message}`);
      });
      const worker = { logger, concurrentJobs: opts.concurrency, ...(opts.flavour === 'batched' ? BATCHING : {}) };
      jobs.utils = await makeWorkerUtils({ pgPool: jobs.enqueuePool, preset: { worker: { logger } } });
      await jobs.utils.migrate();
      jobs.runner = await run({
        pgPool: jobs.workerPool,
        noHandleSignals: true,
        preset: { worker },
        taskList: { [TASK]: (payload, helpers) => jobs.handle(payload as { name: string }, helpers.job.created_at) },
      });
      return jobs;
    } catch (err) {
      await jobs.stop();
      throw err;
    }
  }

  async submit(names: readonly string[]): Promise<SubmitReceipt> {
    await this.utils!.addJobs(names.map((name) => ({ identifier: TASK, payload: { name } })));
    for (const name of names) this.submitted.set(prefixOf(name), (this.submitted.get(prefixOf(name)) ?? 0) + 1);
    return { resends: 0 };
  }

  async unfinished(): Promise<number> {
    return (await this.pool.query<{ n: number }>(sql('bench/graphile_unfinished'))).rows[0]!.n;
  }

  async notStarted(prefix: string): Promise<number> {
    return (this.submitted.get(prefix) ?? 0) - (this.startedByPrefix.get(prefix) ?? 0);
  }

  async timings(prefix: string): Promise<JobTiming[]> {
    return [...this.ran.values()].filter((j) => j.name.startsWith(prefix));
  }

  /** Stops the worker pool (jobs in flight finish), then the connections. Safe to call twice. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.runner?.stop().catch((err: Error) => this.opts.log(`graphile-worker stop: ${err.message}`));
      await this.utils?.release();
      await Promise.all([this.workerPool.end(), this.enqueuePool.end(), this.pool.end()]);
    })();
    return this.stopping;
  }

  private async handle(payload: { name: string }, createdAt: Date): Promise<void> {
    const startedMs = Date.now();
    const timing: JobTiming = { name: payload.name, createdMs: createdAt.getTime(), startedMs, endedMs: null };
    // A retry of a job keeps its first start.
    if (!this.ran.has(payload.name)) {
      this.ran.set(payload.name, timing);
      const prefix = prefixOf(payload.name);
      this.startedByPrefix.set(prefix, (this.startedByPrefix.get(prefix) ?? 0) + 1);
    }
    await delay(JOB_SHAPE.durationMs);
    this.ran.get(payload.name)!.endedMs = Date.now();
  }
}
