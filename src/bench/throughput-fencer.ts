// fencer as the throughput benchmark's JobSystem: jobs go to POST /api/v1/jobs (a JSON array for
// several, all accepted or none; one document for one), asked of the replicas through
// src/net/any-replica.ts, starting with the one whose turn it is; what happened to them is read
// from the database (src/store/sql/bench/throughput_*.sql).
//
// A resend is safe: the jobs are named, so a batch that a replica committed but did not answer in
// time comes back 200 "unchanged" from the next one, not as duplicates. (The Idempotency-Key
// header is honoured for a single job without a name of its own; a JSON array does not use it.)
// A 429 carries Retry-After: the batch is sent again after that long. A round in which no replica
// took it (each timed out or said "busy") is tried again after a second.
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';
import { unfinishedCount } from '../store/jobs.js';
import { ReplicaList, askReplicas, describeFetchFailure, type Attempt } from '../net/any-replica.js';
import { delay } from '../lifecycle.js';
import { rotate, type JobTiming } from './throughput-stats.js';
import { JOB_SHAPE, type JobSystem, type SubmitReceipt } from './throughput-modes.js';

/** A batch of 1,000 can wait behind others on a busy replica: a timeout only says "try another". */
const REQUEST_TIMEOUT_MS = 60_000;
/** "Not me, not now": another replica may well take it. */
// A batch is all or nothing and its jobs are named, so sending it again after a 500 (a
// transaction cut short, e.g. by the idle-in-transaction limit when a replica's event loop
// stalls) is safe: the bench counts those in its log rather than dying on the first.
const TRY_NEXT_STATUSES = new Set([500, 502, 503, 504]);
const NONE_TOOK_IT_WAIT_MS = 1000;
/** Resends of one batch before the benchmark gives up on it. */
const MAX_RESENDS = 30;

type Answer = { accepted: true } | { accepted: false; retryAfterSeconds: number };

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
    const body = JSON.stringify(names.length === 1 ? jobManifest(names[0]!) : names.map(jobManifest));
    const replicas = new ReplicaList(rotate(this.replicaUrls, turn));
    for (let resends = 0; ; resends++) {
      this.signal?.throwIfAborted();
      const outcome = await askReplicas(replicas, (server) => post(server, body));
      if ('answer' in outcome && outcome.answer.accepted) return { resends };
      if (resends >= MAX_RESENDS) {
        const why =
          'failures' in outcome ? outcome.failures.map((f) => `${f.server}: ${f.why}`).join('; ') : 'still 429';
        throw new Error(`${names.length} jobs from ${names[0]} on: not accepted after ${resends} resends (${why})`);
      }
      const waitMs =
        'answer' in outcome && !outcome.answer.accepted
          ? outcome.answer.retryAfterSeconds * 1000
          : NONE_TOOK_IT_WAIT_MS;
      await delay(waitMs, this.signal);
    }
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

async function post(server: string, body: string): Promise<Attempt<Answer>> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${server}/api/v1/jobs`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    text = await response.text();
  } catch (err) {
    return { next: describeFetchFailure(err) };
  }
  if (response.status === 201 || response.status === 200) return { answer: { accepted: true } };
  if (response.status === 429)
    return { answer: { accepted: false, retryAfterSeconds: Number(response.headers.get('retry-after') ?? 1) || 1 } };
  if (TRY_NEXT_STATUSES.has(response.status)) return { next: `HTTP ${response.status}` };
  // Any other refusal (a 400, a 409) every replica would repeat.
  throw new Error(`${server} refused the jobs: HTTP ${response.status} ${text.slice(0, 300)}`);
}
