// Backpressure: past FENCER_MAX_PENDING jobs waiting to be placed, a submission is refused with
// 429 and Retry-After, nothing stored, instead of being accepted into a backlog the cluster cannot
// place before its callers give up. The count is a replica's, read at most once a second (one
// statement shared by every request meanwhile), plus what this replica accepted since: a bound
// that several replicas may together pass by what they accept in that second, never a cost per job.
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';
import { BacklogFullError } from '../errors/backlog-full-error.js';

const REFRESH_MS = 1000;
/** A full backlog drains by placements; a client asked to wait this long per thousand jobs over, 1 to 30 s. */
const RETRY_AFTER_PER_THOUSAND_S = 1;

export class Backlog {
  private counted: { at: number; pending: number } | undefined;
  private reading: Promise<number> | undefined;
  /** Jobs this replica accepted since the last count. */
  private acceptedSince = 0;

  constructor(
    private readonly db: Db,
    readonly maxPending: number,
  ) {}

  /** Refuses `adding` more waiting jobs when the backlog would pass its bound. */
  async admit(adding: number): Promise<void> {
    if (adding === 0) return;
    const pending = (await this.pending()) + this.acceptedSince;
    if (pending + adding <= this.maxPending) return;
    const over = pending + adding - this.maxPending;
    throw new BacklogFullError(
      `${pending} jobs wait to be placed and this adds ${adding}; the cluster takes at most ${this.maxPending} (FENCER_MAX_PENDING). Nothing was stored; try again later`,
      Math.min(30, Math.max(1, Math.ceil((over / 1000) * RETRY_AFTER_PER_THOUSAND_S))),
    );
  }

  /** Counts jobs a replica accepted (after they were stored). */
  accepted(jobs: number): void {
    this.acceptedSince += jobs;
  }

  private async pending(): Promise<number> {
    const now = performance.now();
    if (this.counted && now - this.counted.at < REFRESH_MS) return this.counted.pending;
    this.reading ??= (async () => {
      try {
        const pending = (await this.db.query<{ n: number }>(sql('jobs/pending_count'))).rows[0]!.n;
        this.counted = { at: performance.now(), pending };
        this.acceptedSince = 0;
        return pending;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}
