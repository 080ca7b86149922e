// job-reconcile: a placement whose node never claimed it (never reported start) within the
// confirm timeout goes back to pending without using an attempt; a job whose node gave up its
// assignment (self-fence, shutdown) is retried, using an attempt; a run its live node never
// reported the end of, long after it must have ended, is ended Lost and retried (its node
// repeats an end report until the control plane agrees, so this is the last resort: a node
// whose reports are refused for good). Retries after a node's death are counted when
// node-health gives the job back.
import type { Logger } from 'pino';
import type { Db } from '../../store/db.js';
import type { Lease } from '../../lease/lease.js';
import { fenced } from '../../lease/fenced.js';
import { expireOverdue, orphanedJobs, overdueAssignments, retryOrphaned, returnUnconfirmed, unconfirmedAssignments } from '../../store/decisions.js';
import type { ReconcileResult, Reconciler } from '../controller.js';

const BATCH = 1000;

export class JobReconcile implements Reconciler {
  readonly name = 'job-reconcile';

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    private readonly confirmTimeoutMs: number,
    /**
     * How long past a run's end (its claim plus its duration) the node may still be running it:
     * a run begins within the confirm timeout of its claim, and a node stalled (not cut off) for
     * up to the silence timeout still ends it late. After that, nobody runs it.
     */
    private readonly overdueSlackMs: number,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const [unconfirmed, orphans, overdue] = await Promise.all([
      unconfirmedAssignments(this.db, BATCH),
      orphanedJobs(this.db, BATCH),
      overdueAssignments(this.db, BATCH, this.overdueSlackMs),
    ]);
    if (unconfirmed.length === 0 && orphans.length === 0 && overdue.length === 0) return 'done';
    const [returned, retried, expired] = await fenced(this.db, this.lease, async (tx) => [
      await returnUnconfirmed(tx, unconfirmed, this.confirmTimeoutMs),
      await retryOrphaned(tx, orphans),
      await expireOverdue(tx, overdue, this.overdueSlackMs),
    ]);
    if (returned > 0) log.warn({ returned }, 'gave back placements their nodes never confirmed');
    if (retried > 0) log.warn({ retried }, 'retrying jobs their nodes gave up');
    if (expired > 0) log.warn({ expired }, 'retrying runs their nodes never reported the end of');
    return [unconfirmed, orphans, overdue].some((list) => list.length === BATCH) ? 'requeue' : 'done';
  }
}
