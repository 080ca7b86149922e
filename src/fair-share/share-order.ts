// Which pending job a placement round considers next when queues share the cluster. Pure: plain
// data in, decisions out; best fit (src/placement/best-fit.ts) then picks where each job goes.
//
// Queues: Deficit Round Robin by weight. Each visit to a queue with ready jobs adds weight ×
// quantum to its deficit; it is served while its deficit covers its next job's cost, the job's
// dominant share (its larger fraction of the cluster's CPU or memory); then the next queue's
// turn. The quantum is the largest cost in the round, so a queue of weight 1 gets at least one
// job per visit. Deficits and the queue whose turn it is carry over from round to round (a busy
// cluster frees room for a few jobs per round), and a queue with nothing ready starts from zero.
//
// Lanes within a queue: high, normal, low get 70 / 20 / 10 % of what the queue is given, by
// stride scheduling on the same costs; a lane with nothing ready passes its share to the next
// lower lane that has jobs (or, for the lowest, the next higher), so low is never starved and
// high never held back by an empty lane. `lanes: strict` serves high, then normal, then low.
//
// Limits are hard: a queue at its concurrency or resource limit, or a namespace at its quota or
// out of placement tokens, gets nothing more this round, whatever its share (the database
// refuses it anyway, see migration 0009). Within a lane the policy's order holds (most work
// first by default), so one queue alone is placed exactly as before.
//
// With fair share off, every job is in one backlog in arrival order; the limits still hold.
import type { Lane } from '../domain/resources.js';
import type { NodeCapacity, PendingJob, Waiting } from '../placement/types.js';
import { orderJobs, type Ordering } from '../placement/policies.js';

export interface QueueState {
  /** namespace/name */
  key: string;
  weight: number;
  strictLanes: boolean;
  concurrencyLimit: number | null;
  cpuLimitMillis: number | null;
  memoryLimitBytes: number | null;
  /** What its placed jobs (Assigned or Running) hold now. */
  running: number;
  cpuMillis: number;
  memoryBytes: number;
}

export interface NamespaceQuotaState {
  namespace: string;
  /** The ResourceQuota's name, for messages. */
  name: string;
  cpuLimitMillis: number | null;
  memoryLimitBytes: number | null;
  cpuMillis: number;
  memoryBytes: number;
  /** Placement tokens available now (null: no placement rate). */
  tokens: number | null;
  perSecond: number | null;
  burst: number | null;
}

/** What a round knows of queues and quotas, and whether it shares by weight. */
export interface Shares {
  fairShare: boolean;
  queues: readonly QueueState[];
  quotas: readonly NamespaceQuotaState[];
  /** Carried from round to round by the placement controller (leader memory; lost on handoff). */
  memory: ShareMemory;
  /** Test-only (guard queue-limit-plan): the round places past queue limits and quotas. */
  ignoreLimits?: boolean;
  /** Reasons already written (the round leaves them out) and how many new ones it may return. */
  reasonKnown?: (jobUid: string, reason: string, message: string) => boolean;
  maxReasons?: number;
}

export interface ShareMemory {
  deficits: Map<string, number>;
  /** Per queue, each lane's stride pass (undefined: the lane had nothing ready). */
  lanePasses: Map<string, Array<number | undefined>>;
  /** The queue whose turn it was when the last round ran out of room. */
  cursor: string | null;
}

export function newShareMemory(): ShareMemory {
  return { deficits: new Map(), lanePasses: new Map(), cursor: null };
}

export const LANE_SHARES: readonly number[] = [70, 20, 10];
const LANES: readonly Lane[] = [0, 1, 2];
const UNLIMITED: QueueState = {
  key: '',
  weight: 1,
  strictLanes: false,
  concurrencyLimit: null,
  cpuLimitMillis: null,
  memoryLimitBytes: null,
  running: 0,
  cpuMillis: 0,
  memoryBytes: 0,
};

/** Each lane's share once lanes with nothing ready have passed theirs on (down first, else up). */
export function laneWeights(ready: readonly boolean[], shares: readonly number[] = LANE_SHARES): number[] {
  const weights = ready.map((r, lane) => (r ? shares[lane]! : 0));
  for (let lane = 0; lane < shares.length; lane++) {
    if (ready[lane]) continue;
    let to = -1;
    for (let down = lane + 1; down < shares.length && to < 0; down++) if (ready[down]) to = down;
    for (let up = lane - 1; up >= 0 && to < 0; up--) if (ready[up]) to = up;
    if (to >= 0) weights[to]! += shares[lane]!;
  }
  return weights;
}

type Reason = Pick<Waiting, 'reason' | 'message'>;

/**
 * The jobs by queue and lane, in the order given, and the largest CPU and memory asked (the
 * round's quantum is the larger share of the two). Its own function: one pass, called once a
 * round, kept small so that it is compiled whole.
 */
function groupJobs(
  jobs: readonly PendingJob[],
  fairShare: boolean,
): { grouped: Map<string, PendingJob[][]>; largest: Pick<PendingJob, 'cpuMillis' | 'memoryBytes'> } {
  const grouped = new Map<string, PendingJob[][]>();
  let cpuMillis = 0;
  let memoryBytes = 0;
  let lastKey: string | undefined;
  let lanes: PendingJob[][] = [];
  for (const job of jobs) {
    const key = fairShare ? (job.queue ?? '') : '';
    // Jobs mostly come queue by queue: no lookup while the queue stays the same.
    if (key !== lastKey) {
      lastKey = key;
      let found = grouped.get(key);
      if (!found) grouped.set(key, (found = [[], [], []]));
      lanes = found;
    }
    lanes[fairShare ? (job.lane ?? 1) : 1]!.push(job);
    if (job.cpuMillis > cpuMillis) cpuMillis = job.cpuMillis;
    if (job.memoryBytes > memoryBytes) memoryBytes = job.memoryBytes;
  }
  return { grouped, largest: { cpuMillis, memoryBytes } };
}

interface QueueTurn {
  state: QueueState;
  lanes: ReadonlyArray<readonly PendingJob[]>;
  heads: number[];
  passes: number[];
  deficit: number;
  /** Set when a limit holds the whole queue for the rest of the round. */
  held: Waiting['reason'] | null;
}

/**
 * The round's jobs one at a time: `next` offers a job, and the caller says `placed` when it
 * found the job a node (a job offered and not placed costs its queue nothing).
 */
export class ShareSequence {
  private readonly turns: QueueTurn[] = [];
  private readonly byKey = new Map<string, QueueTurn>();
  private readonly quotas = new Map<string, NamespaceQuotaState>();
  private readonly held = new Map<string, Waiting>();
  private readonly totalCpu: number;
  private readonly totalMemory: number;
  private readonly quantum: number;
  private pos = 0;
  private visiting = false;

  constructor(
    jobs: readonly PendingJob[],
    ordering: Ordering,
    nodes: readonly NodeCapacity[],
    private readonly shares: Shares,
  ) {
    this.totalCpu = nodes.reduce((sum, n) => sum + n.cpuMillis, 0) || 1;
    this.totalMemory = nodes.reduce((sum, n) => sum + n.memoryBytes, 0) || 1;
    const states = new Map(shares.queues.map((q) => [q.key, { ...q }]));
    for (const q of shares.quotas) this.quotas.set(q.namespace, { ...q });
    const { grouped, largest } = groupJobs(jobs, shares.fairShare);
    this.quantum = this.cost(largest) || 1;
    const keys = [...grouped.keys()].sort();
    for (const key of keys) {
      const lanes = grouped
        .get(key)!
        .map((lane) =>
          shares.fairShare
            ? orderJobs(lane, ordering === 'most-work-balanced' ? 'most-work-first' : ordering, nodes)
            : lane,
        );
      // A copy: placed() counts into it.
      const state = shares.fairShare ? (states.get(key) ?? { ...UNLIMITED, key }) : { ...UNLIMITED };
      const turn: QueueTurn = {
        state,
        lanes,
        heads: [0, 0, 0],
        passes: this.startPasses(key, lanes),
        deficit: shares.memory.deficits.get(key) ?? 0,
        held: null,
      };
      this.turns.push(turn);
      this.byKey.set(key, turn);
    }
    // Queues with nothing ready start from zero next time.
    for (const key of [...shares.memory.deficits.keys()]) if (!grouped.has(key)) shares.memory.deficits.delete(key);
    for (const key of [...shares.memory.lanePasses.keys()]) if (!grouped.has(key)) shares.memory.lanePasses.delete(key);
    const resume = shares.memory.cursor === null ? -1 : keys.indexOf(shares.memory.cursor);
    if (resume >= 0) {
      this.pos = resume;
      this.visiting = true;
    } else {
      // The queue after the remembered one (in key order) is next; new queues wait their turn.
      const after = shares.memory.cursor === null ? 0 : keys.findIndex((k) => k > shares.memory.cursor!);
      this.pos = after < 0 ? 0 : after;
    }
  }

  /** The next job to try, or undefined when every queue is done or held this round. */
  next(): PendingJob | undefined {
    for (let spins = 0; this.turns.length > 0; spins++) {
      if (this.pos >= this.turns.length) this.pos = 0;
      const turn = this.turns[this.pos]!;
      if (!this.visiting) {
        turn.deficit += turn.state.weight * this.quantum;
        this.visiting = true;
      }
      const job = this.head(turn);
      if (!job) {
        this.finish(turn);
        continue;
      }
      if (!this.shares.fairShare || turn.deficit >= this.cost(job)) {
        turn.heads[job.lane !== undefined && this.shares.fairShare ? job.lane : 1]!++;
        this.shares.memory.cursor = turn.state.key;
        return job;
      }
      this.visiting = false;
      this.pos++;
      // Deficits grow every visit, so some queue's covers its job within a bounded number of visits.
      if (spins > 1_000_000) throw new Error('fair share: no queue could be served');
    }
    return undefined;
  }

  /** The job `next` offered found a node: its queue, lane and namespace pay for it. */
  placed(job: PendingJob): void {
    const turn = this.byKey.get(this.shares.fairShare ? (job.queue ?? '') : '')!;
    const cost = this.cost(job);
    if (this.shares.fairShare) {
      turn.deficit -= cost;
      const lane = job.lane ?? 1;
      turn.passes[lane]! += cost / Math.max(1, this.weightsOf(turn)[lane]!);
    }
    const state = this.queueOf(job);
    state.running++;
    state.cpuMillis += job.cpuMillis;
    state.memoryBytes += job.memoryBytes;
    const quota = job.namespace === undefined ? undefined : this.quotas.get(job.namespace);
    if (quota) {
      quota.cpuMillis += job.cpuMillis;
      quota.memoryBytes += job.memoryBytes;
      if (quota.tokens !== null) quota.tokens -= 1;
    }
  }

  /**
   * Why each job held back by a limit waits; the round's other unplaced jobs wait for their share.
   * Only reasons not written yet, up to the round's budget: a backlog of 10,000 is not 10,000
   * objects a round. A reason not held by a job's own limit is its queue's and namespace's, so it
   * is worked out once per queue and namespace, not per job.
   */
  waiting(jobs: readonly PendingJob[], placed: ReadonlySet<string>): Waiting[] {
    this.saveMemory();
    const known = this.shares.reasonKnown ?? (() => false);
    const max = this.shares.maxReasons ?? Infinity;
    const standing = new Map<string | undefined, Map<string | undefined, Reason>>();
    const out: Waiting[] = [];
    for (const job of jobs) {
      if (out.length >= max) break;
      if (placed.has(job.uid)) continue;
      const w = (this.held.size > 0 ? this.held.get(job.uid) : undefined) ?? this.standingWait(job, standing);
      if (!known(job.uid, w.reason, w.message)) out.push({ jobUid: job.uid, reason: w.reason, message: w.message });
    }
    return out;
  }

  /** Why a job no limit of its own held waits: its queue's or namespace's standing limit, else its share. */
  private standingWait(job: PendingJob, memo: Map<string | undefined, Map<string | undefined, Reason>>): Reason {
    // Keyed by the job's own queue and namespace as given (no queue is not queue ''): the reason's message names them.
    let byNamespace = memo.get(job.queue);
    if (!byNamespace) memo.set(job.queue, (byNamespace = new Map()));
    let reason = byNamespace.get(job.namespace);
    if (!reason) {
      reason = this.limitOf(job, this.queueOf(job), true) ?? this.shareWait(job);
      byNamespace.set(job.namespace, reason);
    }
    return reason;
  }

  private shareWait(job: PendingJob): Reason {
    const message = this.shares.fairShare
      ? `waiting for room: queues with ready jobs share the cluster by weight (queue ${job.queue ?? 'default'}, weight ${this.queueOf(job).weight})`
      : 'waiting for room: jobs are placed in arrival order (fair share is off)';
    return { reason: 'WaitingForShare', message };
  }

  /**
   * Keeps what the next round needs: the deficits of queues still waiting for room (a queue that
   * ran out of ready jobs, or was held by a limit, starts from zero), and every queue's lane passes.
   */
  private saveMemory(): void {
    if (!this.shares.fairShare) return;
    for (const turn of this.byKey.values()) {
      this.shares.memory.lanePasses.set(
        turn.state.key,
        turn.passes.map((p, lane) => (turn.lanes[lane]!.length > 0 ? p : undefined)),
      );
      if (this.turns.includes(turn)) this.shares.memory.deficits.set(turn.state.key, turn.deficit);
      else this.shares.memory.deficits.delete(turn.state.key);
    }
  }

  // The queue's next job by lane (skipping jobs a limit holds), or undefined when none is left.
  private head(turn: QueueTurn): PendingJob | undefined {
    for (;;) {
      const lane = this.laneOf(turn);
      if (lane === undefined) return undefined;
      const job = turn.lanes[lane]![turn.heads[lane]!]!;
      const limit = this.limitOf(job, this.shares.fairShare ? turn.state : this.queueOf(job), false);
      if (!limit) return job;
      this.held.set(job.uid, limit);
      turn.heads[lane]!++;
      if (limit.reason === 'QueueAtLimit' && this.atConcurrencyLimit(turn.state)) {
        turn.held = 'QueueAtLimit';
        for (const l of LANES)
          for (let i = turn.heads[l]!; i < turn.lanes[l]!.length; i++) this.held.set(turn.lanes[l]![i]!.uid, limit);
        return undefined;
      }
    }
  }

  // Called for every job a round offers: allocates nothing.
  private laneOf(turn: QueueTurn): Lane | undefined {
    const byPass = this.shares.fairShare && !turn.state.strictLanes;
    let best: Lane | undefined;
    for (const l of LANES) {
      if (turn.heads[l]! >= turn.lanes[l]!.length) continue;
      if (!byPass) return l;
      if (best === undefined || turn.passes[l]! < turn.passes[best]!) best = l;
    }
    return best;
  }

  private weightsOf(turn: QueueTurn): number[] {
    return laneWeights(LANES.map((l) => turn.lanes[l]!.length > 0));
  }

  private finish(turn: QueueTurn): void {
    this.turns.splice(this.turns.indexOf(turn), 1);
    this.visiting = false;
  }

  // A lane's pass starts where the lanes already ready stand, so a lane that was empty gets no credit.
  private startPasses(key: string, lanes: ReadonlyArray<readonly PendingJob[]>): number[] {
    const kept = this.shares.memory.lanePasses.get(key) ?? [];
    const known = LANES.filter((l) => lanes[l]!.length > 0 && kept[l] !== undefined).map((l) => kept[l]!);
    const floor = known.length > 0 ? Math.min(...known) : 0;
    return LANES.map((l) => Math.max(0, (kept[l] ?? floor) - floor));
  }

  private cost(job: Pick<PendingJob, 'cpuMillis' | 'memoryBytes'>): number {
    return Math.max(job.cpuMillis / this.totalCpu, job.memoryBytes / this.totalMemory);
  }

  private queueOf(job: PendingJob): QueueState {
    return this.byKey.get(job.queue ?? '')?.state ?? this.stateByKey(job.queue ?? '');
  }

  private readonly others = new Map<string, QueueState>();
  private stateByKey(key: string): QueueState {
    let state = this.others.get(key);
    if (!state) {
      state = { ...(this.shares.queues.find((q) => q.key === key) ?? { ...UNLIMITED, key }) };
      this.others.set(key, state);
    }
    return state;
  }

  private atConcurrencyLimit(q: QueueState): boolean {
    return q.concurrencyLimit !== null && q.running >= q.concurrencyLimit;
  }

  /** What stops this job now, if anything: its queue's limits, then its namespace's quota. */
  private limitOf(job: PendingJob, q: QueueState, onlyStanding: boolean): Waiting | null {
    if (this.shares.ignoreLimits) return null;
    if (this.atConcurrencyLimit(q)) {
      return {
        jobUid: job.uid,
        reason: 'QueueAtLimit',
        message: `queue ${q.key} has ${q.concurrencyLimit} jobs placed, its spec.concurrencyLimit`,
      };
    }
    const quota = job.namespace === undefined || this.quotas.size === 0 ? undefined : this.quotas.get(job.namespace);
    if (quota?.tokens !== null && quota?.tokens !== undefined && quota.tokens < 1) {
      return {
        jobUid: job.uid,
        reason: 'QuotaExceeded',
        message: `namespace ${quota.namespace}: ResourceQuota ${quota.name} allows ${quota.perSecond} placements a second (burst ${quota.burst}); none left now`,
      };
    }
    if (onlyStanding) return null;
    if (
      (q.cpuLimitMillis !== null && q.cpuMillis + job.cpuMillis > q.cpuLimitMillis) ||
      (q.memoryLimitBytes !== null && q.memoryBytes + job.memoryBytes > q.memoryLimitBytes)
    ) {
      return {
        jobUid: job.uid,
        reason: 'QueueAtLimit',
        message: `queue ${q.key}: its placed jobs would hold more than its spec.resourceLimit`,
      };
    }
    if (
      quota &&
      ((quota.cpuLimitMillis !== null && quota.cpuMillis + job.cpuMillis > quota.cpuLimitMillis) ||
        (quota.memoryLimitBytes !== null && quota.memoryBytes + job.memoryBytes > quota.memoryLimitBytes))
    ) {
      return {
        jobUid: job.uid,
        reason: 'QuotaExceeded',
        message: `namespace ${quota.namespace}: its placed jobs would hold more CPU or memory than ResourceQuota ${quota.name} allows`,
      };
    }
    return null;
  }
}
