// fencer as the throughput benchmark's JobSystem: jobs go to POST /api/v1/jobs (a JSON array for
// several, all accepted or none; one document for one), asked of the replicas through
// src/net/api-client.ts, starting with the one whose turn it is; what happened to them is read
// from the database (src/store/sql/bench/throughput_*.sql).
//
// A resend is safe: the jobs are named, so a batch that a replica committed but did not answer in
// time comes back 200 "unchanged" from the next one, not as duplicates. (The Idempotency-Key
// header is honoured for a single job without a name of its own; a JSON array does not use it.)
// A 429 carries Retry-After: the batch is sent again after that long. A round in which no replica
// took it (each timed out, said "busy" or cut its transaction short: a 500) is tried again after
// a second. Every resend is counted in the bench's log.
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';
import { unfinishedCount } from '../store/jobs.js';
import { ApiClient, TRY_NEXT_AFTER_500 } from '../net/api-client.js';
import { rotate, type JobTiming } from './throughput-stats.js';
import { JOB_SHAPE, type JobSystem, type SubmitReceipt } from './throughput-modes.js';

/** A batch of 1,000 can wait behind others on a busy replica: a timeout only says "try another". */
const REQUEST_TIMEOUT_MS = 60_000;
const NONE_TOOK_IT_WAIT_MS = 1000;
/** Resends of one batch before the benchmark gives up on it. */
const MAX_RESENDS = 30;

export function jobManifest(name: string): object {
  return {
    apiVersion: 'fencer.dev/v1',
    kind: 'Job',
    metadata: { name },
    spec: { resources: { cpu: JOB_SHAPE.cpu, memory: JOB_SHAPE.memory }, duration: `${JOB_SHAPE.durationMs}ms` },
  };
}

export class FencerJobs implements JobSystem {
  readonly label = 'fencer';

  constructor(
    private readonly replicaUrls: readonly string[],
    private readonly db: Db,
    private readonly signal?: AbortSignal,
  ) {}

  async submit(names: readonly string[], turn: number): Promise<SubmitReceipt> {
    let resends = 0;
    const client = new ApiClient(rotate(this.replicaUrls, turn), {
      timeoutMs: REQUEST_TIMEOUT_MS,
      tryNextStatuses: TRY_NEXT_AFTER_500,
      rounds: MAX_RESENDS + 1,
      roundPauseMs: NONE_TOOK_IT_WAIT_MS,
      onRetry: () => resends++,
      signal: this.signal,
    });
    try {
      await client.submitJobs(names.length === 1 ? jobManifest(names[0]!) : names.map(jobManifest));
    } catch (err) {
      if (this.signal?.aborted) throw err;
      throw new Error(
        `${names.length} jobs from ${names[0]} on: not accepted after ${resends} resends (${(err as Error).message})`,
      );
    }
    return { resends };
  }

  unfinished(): Promise<number> {
    return unfinishedCount(this.db);
  }

  async notStarted(prefix: string): Promise<number> {
    return (await this.db.query<{ n: number }>(sql('bench/throughput_not_started'), [prefix])).rows[0]!.n;
  }

  async timings(prefix: string): Promise<JobTiming[]> {
    return (await this.db.query<JobTiming>(sql('bench/throughput_jobs'), [prefix])).rows;
  }
}
