// job-reconcile: a placement whose node never confirmed it (never reported start) within the
// confirm timeout goes back to pending without using an attempt; a job whose node gave up its
// assignment (self-fence, shutdown) is retried, using an attempt. Retries after a node's death
// are counted when node-health gives the job back.
import type { Logger } from 'pino';
import type { Db } from '../../store/db.js';
import type { Lease } from '../../lease/lease.js';
import { fenced } from '../../lease/fenced.js';
import { orphanedJobs, retryOrphaned, returnUnconfirmed, unconfirmedAssignments } from '../../store/decisions.js';
import type { ReconcileResult, Reconciler } from '../controller.js';

const BATCH = 1000;

export class JobReconcile implements Reconciler {
  readonly name = 'job-reconcile';

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    private readonly confirmTimeoutMs: number,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const [unconfirmed, orphans] = await Promise.all([unconfirmedAssignments(this.db, BATCH), orphanedJobs(this.db, BATCH)]);
    if (unconfirmed.length === 0 && orphans.length === 0) return 'done';
    const [returned, retried] = await fenced(this.db, this.lease, async (tx) => [
      await returnUnconfirmed(tx, unconfirmed, this.confirmTimeoutMs),
      await retryOrphaned(tx, orphans),
    ]);
    if (returned > 0) log.warn({ returned }, 'gave back placements their nodes never confirmed');
    if (retried > 0) log.warn({ retried }, 'retrying jobs their nodes gave up');
    return unconfirmed.length === BATCH || orphans.length === BATCH ? 'requeue' : 'done';
  }
}
