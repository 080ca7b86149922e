// watch-events: the leader forgets watch events older than a watch may be resumed within. A
// client resuming from an older resourceVersion gets 410 Gone and lists again, as with a
// Kubernetes API server's compacted history.
import type { Logger } from 'pino';
import type { Db } from '../../store/db.js';
import type { Lease } from '../../lease/lease.js';
import { fenced } from '../../lease/fenced.js';
import { pruneWatchEvents } from '../../store/watch.js';
import type { ReconcileResult, Reconciler } from '../controller.js';

/** How long a watch may be resumed from where it was (kube-apiserver keeps about 5 minutes). */
export const WATCH_EVENTS_KEEP_SECONDS = 15 * 60;
const PRUNE_PER_PASS = 10_000;

export class WatchEventsPrune implements Reconciler {
  readonly name = 'watch-events';
  readonly intervalMs = 10_000;

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const pruned = await fenced(this.db, this.lease, (tx) => pruneWatchEvents(tx, WATCH_EVENTS_KEEP_SECONDS, PRUNE_PER_PASS));
    if (pruned > 0) log.debug({ pruned }, 'forgot old watch events');
    return pruned === PRUNE_PER_PASS ? 'requeue' : 'done';
  }
}
