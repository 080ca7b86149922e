// node-health: a Ready node that sent no heartbeat for deadAfterSilentMs, or whose watch
// stream closed and did not come back within deadAfterDisconnectMs, is declared dead (fenced,
// re-checked in the transaction) and its jobs go back to pending or fail when out of attempts.
import type { Logger } from 'pino';
import type { Db } from '../../store/db.js';
import type { Lease } from '../../lease/lease.js';
import { fenced } from '../../lease/fenced.js';
import { deadNodeCandidates, declareNodeDead } from '../../store/decisions.js';
import { nodesDeclaredDead } from '../../metrics/registry.js';
import type { ReconcileResult, Reconciler } from '../controller.js';

export class NodeHealth implements Reconciler {
  readonly name = 'node-health';

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    private readonly deadAfterSilentMs: number,
    private readonly deadAfterDisconnectMs: number,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const candidates = await deadNodeCandidates(this.db, this.deadAfterSilentMs, this.deadAfterDisconnectMs);
    for (const { name, reason } of candidates) {
      const requeued = await fenced(this.db, this.lease, (tx) =>
        declareNodeDead(tx, name, this.deadAfterSilentMs, this.deadAfterDisconnectMs, reason),
      );
      if (requeued === null) continue;
      nodesDeclaredDead.inc();
      log.warn({ node: name, reason, jobs: requeued }, 'node declared dead');
    }
    return 'done';
  }
}
