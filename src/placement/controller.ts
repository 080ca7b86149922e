// placement: pending, due jobs onto Ready nodes, best fit. Woken by NOTIFY on submit (and when
// an assignment ends, freeing room), with a periodic pass as the safety net. A round's
// decisions commit together in one fenced transaction, then NOTIFY delivers them to nodes.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { Lease } from '../lease/lease.js';
import { fenced } from '../lease/fenced.js';
import { bestFit, type PendingJob, type Placement as JobPlacement } from './best-fit.js';
import { isBroken } from '../testing/broken-guards.js';
import { DEFAULT_POLICY, type Policy } from './policies.js';
import {
  commitPlacements,
  LEAST_SLICE,
  markWaiting,
  readPendingJobs,
  readRoundState,
  type ClaimedJob,
  type PlacementInput,
} from './store.js';
import type { PendingSet } from './pending-set.js';
import { ReasonMarks } from './reason-marks.js';
import { newShareMemory, type Shares } from '../fair-share/share-order.js';
import {
  jobPlacementWaitSeconds,
  jobsPlaced,
  placementDecideSeconds,
  placementRoundSeconds,
} from '../metrics/registry.js';
import type { ReconcileResult, Reconciler } from '../controllers/controller.js';

/** Pending jobs one round reads, oldest first. */
export const ROUND_LIMIT = 10_000;

/** No bound, as the database's int counts it. */
const UNBOUNDED = 2 ** 31 - 1;

/**
 * While jobs wait, others end (and free room) many times a second: place for them together, one
 * round per rest. With no job pending after a round there is no rest, so the next job submitted
 * to an idle cluster is placed at once. (Resting only after rounds that found a job to place cost
 * a burst a sixth of its throughput: with every node's unclaimed backlog full, each claim woke a
 * round that found nothing.)
 */
const WAITING_REST_MS = 30;

/**
 * Most reasons a round writes. A flood of 10,000 jobs gets its WaitingForShare over a few rounds
 * instead of in one large write; the reasons go in their own transaction after the placements,
 * so they never delay a job that found room.
 */
export const REASONS_PER_ROUND = 1000;

export class Placement implements Reconciler {
  readonly name = 'placement';
  /** Reasons already written, so a waiting job costs no write per pass. */
  private readonly marked = new ReasonMarks();
  /** Fair share's deficits and turn, from round to round (a new leader starts afresh). */
  private readonly shareMemory = newShareMemory();

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    /** The most unclaimed assignments a node may have (config.ts, maxUnclaimedPerNode). */
    private readonly maxUnclaimed: number,
    /** Only nodes heard from this recently are a home for a job (not dead, maybe, but not well). */
    private readonly freshHeartbeatMs: number,
    private readonly policy: Policy = DEFAULT_POLICY,
    /** Queues share the cluster by weight (DRR); off: one backlog in arrival order. */
    private readonly fairShare = true,
    /** The pending jobs kept between rounds; without it (or while it cannot be trusted) each round reads them. */
    private readonly pending?: PendingSet,
  ) {}

  /** The round's input; null when the pending set is trusted and empty (no round to run). */
  private async readInput(): Promise<PlacementInput | null> {
    // Broken on purpose (src/testing/broken-guards.ts, unclaimed-bound): a node is given all it has room for at once.
    const maxUnclaimed = isBroken('unclaimed-bound') ? UNBOUNDED : this.maxUnclaimed;
    // Nothing held, named or in doubt: no job to place, so nothing to read (most periodic passes).
    if (this.pending && !this.pending.mayHaveWaiting()) return null;
    // The pending jobs and the round's state read side by side, each on its own connection: one
    // round trip's wait instead of four.
    const [trusted, state] = await Promise.all([
      this.pending ? this.pending.sync(this.db) : false,
      readRoundState(this.db, this.freshHeartbeatMs, maxUnclaimed),
    ]);
    if (!trusted) return readPendingJobs(this.db, ROUND_LIMIT, state);
    if (this.pending!.size === 0) return null;
    return {
      ...state,
      ...this.pending!.select(ROUND_LIMIT, LEAST_SLICE, state.room, new Set(state.queues.map((q) => q.key))),
    };
  }

  restMs(): number {
    // Without the pending set (not trusted just now), rest as if jobs waited.
    return !this.pending || this.pending.size > 0 ? WAITING_REST_MS : 0;
  }

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const startedAt = performance.now();
    const input = await this.readInput();
    if (input === null || input.jobs.length === 0) return 'done';
    const { jobs, nodes } = input;
    const decideAt = performance.now();
    const shares: Shares = {
      fairShare: this.fairShare,
      queues: input.queues,
      quotas: input.quotas,
      memory: this.shareMemory,
      ignoreLimits: isBroken('queue-limit-plan'),
      reasonKnown: (uid, reason, message) => {
        const w = stored({ jobUid: uid, reason, message });
        return this.marked.has(uid, w.reason, w.message);
      },
      maxReasons: REASONS_PER_ROUND,
    };
    const round = bestFit(
      jobs,
      nodes,
      this.fairShare ? this.policy : { ...this.policy, ordering: 'arrival' },
      { ignorePool: isBroken('pool-match'), ignoreLabels: isBroken('label-match') },
      shares,
    );
    placementDecideSeconds.observe((performance.now() - decideAt) / 1000);
    const reasons = [
      ...round.unschedulable.map((u) => ({ jobUid: u.jobUid, reason: 'Unschedulable', message: u.message })),
      ...round.waiting, // already without the reasons written before
    ]
      .map(stored)
      .filter((w) => !this.marked.has(w.jobUid, w.reason, w.message));
    let placed = 0;
    if (round.placements.length > 0) {
      const tokens = tokensTaken(
        round.placements,
        jobs,
        input.quotas.filter((q) => q.tokens !== null).map((q) => q.namespace),
      );
      const claimed: ClaimedJob[] = [];
      placed = await fenced(this.db, this.lease, (tx, epoch) =>
        commitPlacements(tx, epoch, round.placements, tokens, claimed),
      );
      for (const c of claimed) jobPlacementWaitSeconds.observe(c.wait);
      // Each decision, for following one job through the logs (FENCER_LOG_LEVEL=debug).
      if (log.isLevelEnabled('debug'))
        for (const c of claimed)
          log.debug({ job: c.job, assignment: c.assignment, node: c.node, waitedSeconds: c.wait }, 'placed job');
      // Placed, or found no longer pending by the claim: either way not pending now.
      this.pending?.removed(round.placements.map((p) => p.jobUid));
      jobsPlaced.inc(placed);
    }
    if (reasons.length > 0) {
      const written = reasons.slice(0, REASONS_PER_ROUND);
      await fenced(this.db, this.lease, (tx) => markWaiting(tx, written));
      this.marked.mark(written);
    }
    placementRoundSeconds.observe((performance.now() - startedAt) / 1000);
    if (placed > 0) log.info({ placed, pending: jobs.length }, 'placed jobs');
    return (input.full && placed > 0) || reasons.length >= REASONS_PER_ROUND ? 'requeue' : 'done';
  }
}

/**
 * What a job's row holds for why it waits. WaitingForShare is not stored: a job that only waits
 * its turn has no condition, as a pod in the scheduler's queue has none, and the jobs of a burst
 * cost no status write each. Storing '' clears a reason that no longer holds (mark_waiting.sql
 * writes only rows whose reason changes).
 */
function stored(w: { jobUid: string; reason: string; message: string }): {
  jobUid: string;
  reason: string;
  message: string;
} {
  return w.reason === 'WaitingForShare' ? { jobUid: w.jobUid, reason: '', message: '' } : w;
}

/** Placement tokens the round takes, per namespace with a placement rate. */
function tokensTaken(
  placements: readonly JobPlacement[],
  jobs: readonly PendingJob[],
  rated: readonly string[],
): Map<string, number> {
  const taken = new Map<string, number>();
  if (rated.length === 0) return taken;
  const limited = new Set(rated);
  const namespaceOf = new Map(jobs.map((j) => [j.uid, j.namespace]));
  for (const p of placements) {
    const ns = namespaceOf.get(p.jobUid);
    if (ns !== undefined && limited.has(ns)) taken.set(ns, (taken.get(ns) ?? 0) + 1);
  }
  return taken;
}
