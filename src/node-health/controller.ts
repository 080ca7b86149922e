// node-health: a Ready node that sent no heartbeat for deadAfterSilentMs, or whose watch
// stream closed and did not come back within deadAfterDisconnectMs while its heartbeats stopped
// too (a killed node), is declared dead (fenced, re-checked in the transaction) and its jobs go
// back to pending or fail when out of attempts. A node still heartbeating while it reconnects
// its watch has fenced itself already and is alive: it is not declared dead for it.
//
// Unless most nodes fall quiet at once: then the likelier story is that the control plane is
// the one cut off or starved (its replicas too slow to answer, its network down), not that the
// nodes all died together, and declaring them dead would only stop every job for nothing (the
// nodes have fenced themselves anyway). Like Kubernetes' node lifecycle controller in a fully
// disrupted zone, node-health then holds off, for at most massQuietHoldMs, and says so.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { Lease } from '../lease/lease.js';
import { fenced } from '../lease/fenced.js';
import { deadNodeCandidates, declareNodeDead, nodeSuspects, type DeathRule } from './store.js';
import { nodesDeclaredDead } from '../metrics/registry.js';
import type { ReconcileResult, Reconciler } from '../controllers/controller.js';
import type { Timings } from '../config.js';

export interface MassQuietRule {
  /** A node is quiet when its heartbeat is this overdue, or its watch stream is closed. */
  quietAfterMs: number;
  /** How long to hold off while most nodes are quiet. */
  holdMs: number;
}

export function deathRule(timings: Timings): DeathRule {
  return {
    silentMs: timings.deadAfterSilentMs,
    disconnectedMs: timings.deadAfterDisconnectMs,
    disconnectedQuietMs: timings.disconnectedQuietMs,
  };
}

export class NodeHealth implements Reconciler {
  readonly name = 'node-health';
  /** When this leader began holding off because most nodes were quiet at once. */
  private holdingSince: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    private readonly rule: DeathRule,
    private readonly massQuiet: MassQuietRule,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const candidates = await deadNodeCandidates(this.db, this.rule);
    if (candidates.length === 0) {
      this.holdingSince = undefined;
      return 'done';
    }
    if (await this.mostNodesQuiet(log)) return 'done';
    for (const { name, reason } of candidates) {
      const requeued = await fenced(this.db, this.lease, (tx) => declareNodeDead(tx, name, this.rule, reason));
      if (requeued === null) continue;
      nodesDeclaredDead.inc();
      log.warn({ node: name, reason, jobs: requeued }, 'node declared dead');
    }
    return 'done';
  }

  /** Whether to hold off: at least two nodes and more than half of them quiet, not for too long. */
  private async mostNodesQuiet(log: Logger): Promise<boolean> {
    const { ready, suspect } = await nodeSuspects(this.db, this.massQuiet.quietAfterMs);
    if (suspect < 2 || suspect * 2 <= ready) {
      this.holdingSince = undefined;
      return false;
    }
    const now = performance.now();
    if (this.holdingSince === undefined) {
      this.holdingSince = now;
      log.warn(
        { quiet: suspect, ready, holdMs: this.massQuiet.holdMs },
        'most nodes fell quiet at once: holding off declaring any dead (the control plane may be the one cut off)',
      );
    }
    return now - this.holdingSince < this.massQuiet.holdMs;
  }
}
