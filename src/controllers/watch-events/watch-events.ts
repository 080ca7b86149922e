// watch-events: the leader forgets watch events older than a watch may be resumed within. A
// client resuming from an older resourceVersion gets 410 Gone and lists again, as with a
// Kubernetes API server's compacted history. It forgets cluster events older than a day too, and
// Idempotency-Keys past their lifetime (FENCER_IDEMPOTENCY_KEY_TTL_MS).
import type { Logger } from 'pino';
import type { Db } from '../../store/db.js';
import type { Lease } from '../../lease/lease.js';
import { fenced } from '../../lease/fenced.js';
import { pruneWatchEvents } from '../../store/watch-feed.js';
import { pruneClusterEvents } from '../../store/cluster-events.js';
import type { ReconcileResult, Reconciler } from '../controller.js';
import { pruneIdempotencyKeys } from '../../store/jobs.js';
import { idempotencyKeyTtlMs } from '../../config.js';

/** How long a watch may be resumed from where it was (kube-apiserver keeps about 5 minutes). */
export const WATCH_EVENTS_KEEP_SECONDS = 15 * 60;
const PRUNE_PER_PASS = 10_000;

export class WatchEventsPrune implements Reconciler {
  readonly name = 'watch-events';
  readonly intervalMs = 10_000;

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    private readonly keyTtlMs: number = idempotencyKeyTtlMs(),
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const [pruned, events, keys] = await fenced(this.db, this.lease, async (tx) => [
      await pruneWatchEvents(tx, WATCH_EVENTS_KEEP_SECONDS, PRUNE_PER_PASS),
      await pruneClusterEvents(tx, PRUNE_PER_PASS),
      await pruneIdempotencyKeys(tx, this.keyTtlMs, PRUNE_PER_PASS),
    ]);
    if (pruned + events + keys > 0)
      log.debug({ pruned, events, keys }, 'forgot old watch and cluster events, expired Idempotency-Keys');
    return [pruned, events, keys].includes(PRUNE_PER_PASS) ? 'requeue' : 'done';
  }
}
