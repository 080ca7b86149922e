// job-reconcile: a placement whose node never claimed it (never reported start) within the
// confirm timeout goes back to pending without using an attempt; a job whose run ended without
// success (it failed, or its node gave it up: self-fence, shutdown) is decided by the retry rule.
// A run its live node has not reported the end of, long after it must have ended, is not a
// failure but a question: the node is sent a snapshot, and says again how the run ended (lag is
// not loss). Retries after a node's death are decided when node-health gives the job back.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { Lease } from '../lease/lease.js';
import { fenced } from '../lease/fenced.js';
import {
  askAboutOverdue,
  expireOverdue,
  orphanedJobs,
  overdueAssignments,
  retryOrphaned,
  returnUnconfirmed,
  unconfirmedAssignments,
  type ConfirmRule,
} from './store.js';
import { isBroken } from '../testing/broken-guards.js';
import type { ReconcileResult, Reconciler } from '../controllers/controller.js';

const BATCH = 1000;

export class JobReconcile implements Reconciler {
  readonly name = 'job-reconcile';
  /** When each overdue run's node was first and last asked about it (monotonic ms). */
  private readonly asked = new Map<string, { first: number; last: number }>();

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    private readonly confirm: ConfirmRule,
    /**
     * How long past a run's end (its claim plus its duration) the node may still be running it:
     * a run begins within the confirm timeout of its claim, and a node stalled (not cut off) for
     * up to the silence timeout still ends it late. After that, its node is asked.
     */
    private readonly overdueSlackMs: number,
    /** How often a node is asked again about a run it still has not reported the end of. */
    private readonly askEveryMs = 5000,
    /**
     * How long a live node may leave the question unanswered before the run is taken for lost to
     * it: a disruption (no attempt used), so that a node that forgot a run cannot hold its job
     * forever. The slack before the first question already covers a run that may still be going.
     */
    private readonly unansweredMs = 4 * askEveryMs,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const [unconfirmed, orphans, overdue] = await Promise.all([
      unconfirmedAssignments(this.db, BATCH, this.confirm),
      orphanedJobs(this.db, BATCH),
      overdueAssignments(this.db, BATCH, this.overdueSlackMs),
    ]);
    const lossy = isBroken('not-reported-is-loss'); // broken on purpose (src/testing/broken-guards.ts)
    const unanswered = lossy ? overdue : await this.ask(overdue, log);
    if (unconfirmed.length === 0 && orphans.length === 0 && unanswered.length === 0) return 'done';
    const [returned, retried, expired] = await fenced(this.db, this.lease, async (tx) => [
      await returnUnconfirmed(tx, unconfirmed, this.confirm),
      await retryOrphaned(tx, orphans),
      await expireOverdue(
        tx,
        unanswered,
        lossy
          ? { cause: 'job', waitedMs: this.overdueSlackMs }
          : { cause: 'disruption', waitedMs: this.overdueSlackMs + this.unansweredMs },
      ),
    ]);
    if (returned > 0) log.warn({ returned }, 'gave back placements their nodes never confirmed');
    if (retried > 0) log.info({ retried }, 'decided jobs whose runs ended without success');
    if (expired > 0) log.warn({ expired }, 'retrying runs their nodes never reported the end of');
    return [unconfirmed, orphans].some((list) => list.length === BATCH) ? 'requeue' : 'done';
  }

  /** Asks the nodes of overdue runs (again, every askEveryMs); returns the runs whose node left the question unanswered too long. */
  private async ask<T extends { id: string; node: string }>(overdue: readonly T[], log: Logger): Promise<T[]> {
    const now = performance.now();
    const still = new Set(overdue.map((a) => a.id));
    for (const id of this.asked.keys()) if (!still.has(id)) this.asked.delete(id);
    const unanswered = overdue.filter((a) => now - (this.asked.get(a.id)?.first ?? Infinity) >= this.unansweredMs);
    const due = overdue.filter((a) => now - (this.asked.get(a.id)?.last ?? -Infinity) >= this.askEveryMs);
    if (due.length > 0) {
      const nodes = [...new Set(due.map((a) => a.node))];
      await askAboutOverdue(this.db, nodes);
      for (const a of due) this.asked.set(a.id, { first: this.asked.get(a.id)?.first ?? now, last: now });
      log.warn({ runs: due.length, nodes }, 'asked nodes about runs past their end with no report');
    }
    return unanswered;
  }
}
