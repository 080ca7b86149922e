// placement: pending, due jobs onto Ready nodes, best fit. Woken by NOTIFY on submit (and when
// an assignment ends, freeing room), with a periodic pass as the safety net. A round's
// decisions commit together in one fenced transaction, then NOTIFY delivers them to nodes.
import type { Logger } from 'pino';
import type { Db } from '../../store/db.js';
import type { Lease } from '../../lease/lease.js';
import { fenced } from '../../lease/fenced.js';
import { bestFit } from '../../scheduling/best-fit.js';
import { guardBroken } from '../../guards.js';
import { DEFAULT_POLICY, type Policy } from '../../scheduling/policies.js';
import { commitPlacements, markUnschedulable, readPlacementInput } from '../../store/decisions.js';
import { jobsPlaced, placementDecideSeconds, placementRoundSeconds } from '../../metrics/registry.js';
import type { ReconcileResult, Reconciler } from '../controller.js';

/** Pending jobs one round reads, oldest first. */
export const ROUND_LIMIT = 10_000;

/** Jobs end (and free room) many times a second on a busy cluster: place for them together. */
const MIN_GAP_MS = 30;

export class Placement implements Reconciler {
  readonly name = 'placement';
  readonly minGapMs = MIN_GAP_MS;
  /** Unschedulable messages already written, so an unplaceable job costs no write per pass. */
  private readonly marked = new Map<string, string>();

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    private readonly confirmTimeoutMs: number,
    /** Only nodes heard from this recently are a home for a job (not dead, maybe, but not well). */
    private readonly freshHeartbeatMs: number,
    private readonly policy: Policy = DEFAULT_POLICY,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const startedAt = performance.now();
    const { jobs, nodes } = await readPlacementInput(this.db, ROUND_LIMIT, this.freshHeartbeatMs);
    if (jobs.length === 0) return 'done';
    const decideAt = performance.now();
    const round = bestFit(jobs, nodes, this.policy, { ignorePool: guardBroken('pool-match'), ignoreLabels: guardBroken('label-match') });
    placementDecideSeconds.observe((performance.now() - decideAt) / 1000);
    const newlyUnschedulable = round.unschedulable.filter((u) => this.marked.get(u.jobUid) !== u.message);
    if (round.placements.length === 0 && newlyUnschedulable.length === 0) {
      placementRoundSeconds.observe((performance.now() - startedAt) / 1000);
      return 'done';
    }
    const placed = await fenced(this.db, this.lease, async (tx, epoch) => {
      await markUnschedulable(tx, newlyUnschedulable);
      return commitPlacements(tx, epoch, round.placements, this.confirmTimeoutMs);
    });
    for (const u of newlyUnschedulable) this.marked.set(u.jobUid, u.message);
    if (this.marked.size > 100_000) this.marked.clear();
    jobsPlaced.inc(placed);
    placementRoundSeconds.observe((performance.now() - startedAt) / 1000);
    if (placed > 0) log.info({ placed, pending: jobs.length }, 'placed jobs');
    return jobs.length === ROUND_LIMIT && placed > 0 ? 'requeue' : 'done';
  }
}
