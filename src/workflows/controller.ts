// workflow: the leader's pass over workflows. A waiting job whose needs all succeeded is released
// to placement; one with a need that ended otherwise (Failed, Dead, Skipped, Cancelled) is
// Skipped, naming that need; a workflow none of whose jobs can change any more closes. One
// fenced transaction: a deposed leader's pass writes nothing.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { Lease } from '../lease/lease.js';
import { fenced } from '../lease/fenced.js';
import { isBroken } from '../testing/broken-guards.js';
import { closeSettledWorkflows, releaseReadyJobs, skipBlockedJobs } from './store.js';
import type { ReconcileResult, Reconciler } from '../controllers/controller.js';

const BATCH = 500;

export class WorkflowController implements Reconciler {
  readonly name = 'workflow';

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const skipping = !isBroken('skip-blocked');
    const { released, skipped, closed } = await fenced(this.db, this.lease, async (tx) => ({
      skipped: skipping ? await skipBlockedJobs(tx, BATCH) : 0,
      released: await releaseReadyJobs(tx, BATCH),
      closed: await closeSettledWorkflows(tx, BATCH),
    }));
    if (released > 0) log.info({ released }, 'released jobs whose needs succeeded');
    if (skipped > 0) log.info({ skipped }, 'skipped jobs whose needs did not succeed');
    for (const w of closed) log.info({ workflow: `${w.namespace}/${w.name}`, phase: w.phase }, 'workflow closed');
    // A skip makes its own dependents skippable, and a close may follow: look again at once.
    return skipped > 0 || released === BATCH || closed.length === BATCH ? 'requeue' : 'done';
  }
}
