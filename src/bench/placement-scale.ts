// The placement algorithm alone (no I/O) at scale: rounds over P pending jobs and N nodes, the
// cluster filling up and turning over as it would in a busy day.
//
// Round 1 meets empty nodes (the most placements in one round). After it, each round first
// lets a random 2 % of the running jobs finish, then places into the room they left, with
// every other job still pending: the steady state of a long backlog.
//
// With fair share on, the round is the one the leader runs by default: every job in the
// namespace's default queue, the queue sharing by weight, and a waiting reason asked for each
// job not placed (those already written cost nothing more).
import { bestFit } from '../placement/best-fit.js';
import { newShareMemory, type Shares } from '../fair-share/share-order.js';
import { ReasonMarks } from '../placement/reason-marks.js';
import { REASONS_PER_ROUND } from '../placement/controller.js';
import { pendingJobOf } from '../placement/store.js';
import type { Policy } from '../placement/policies.js';
import type { NodeCapacity, PendingJob } from '../placement/types.js';
import { seededRandom } from '../seeded-random.js';
import { asPendingJob, generateWorkload, workloadNodes } from './workload.js';

export interface ScaleCase {
  pending: number;
  nodes: number;
}

export interface ScaleResult extends ScaleCase {
  policy: Policy;
  fairShare: boolean;
  firstRoundMs: number;
  firstRoundPlaced: number;
  /** Steady-state rounds, sorted. */
  roundMs: number[];
  placedPerRound: number;
}

const DEFAULT_QUEUE = {
  key: 'default/default',
  weight: 1,
  strictLanes: false,
  concurrencyLimit: null,
  cpuLimitMillis: null,
  memoryLimitBytes: null,
  running: 0,
  cpuMillis: 0,
  memoryBytes: 0,
};

export function runScaleCase(
  { pending, nodes: nodeCount }: ScaleCase,
  policy: Policy,
  rounds: number,
  seed = 1,
  fairShare = false,
): ScaleResult {
  const random = seededRandom(seed);
  // In a queue, built as the leader builds them from the database's rows (the same shape).
  const inQueue = (job: PendingJob): PendingJob =>
    pendingJobOf({
      uid: job.uid,
      namespace: 'default',
      queue: 'default',
      lane: 1,
      cpu_millis: job.cpuMillis,
      memory_bytes: job.memoryBytes,
      duration_ms: job.durationMs,
      path_ms: job.durationMs,
      node_selector: {},
      image: null,
      pool: null,
    });
  const jobs = generateWorkload({ jobs: pending, seed, timeScale: 1 }).map((w) =>
    fairShare ? inQueue(asPendingJob(w)) : asPendingJob(w),
  );
  const nodes = workloadNodes(nodeCount);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const running: Array<{ job: PendingJob; node: NodeCapacity }> = [];
  let waiting = jobs;
  const marks = new ReasonMarks();
  const shares: Shares | undefined = fairShare
    ? {
        fairShare: true,
        queues: [DEFAULT_QUEUE],
        quotas: [],
        memory: newShareMemory(),
        reasonKnown: (uid, reason, message) => marks.has(uid, reason, message),
        maxReasons: REASONS_PER_ROUND,
      }
    : undefined;
  const round = () => {
    const started = performance.now();
    const result = bestFit(waiting, nodes, policy, {}, shares);
    const ms = performance.now() - started;
    marks.mark(result.waiting);
    const placed = new Map(result.placements.map((p) => [p.jobUid, byName.get(p.node)!]));
    const still: PendingJob[] = [];
    for (const job of waiting) {
      const node = placed.get(job.uid);
      if (!node) {
        still.push(job);
        continue;
      }
      node.allocatedCpuMillis += job.cpuMillis;
      node.allocatedMemoryBytes += job.memoryBytes;
      running.push({ job, node });
    }
    // The finished jobs' places in the backlog are taken by new ones: keep it at `pending`.
    waiting = still;
    return { ms, placed: result.placements.length };
  };
  const first = round();
  const times: number[] = [];
  let placedTotal = 0;
  for (let r = 0; r < rounds; r++) {
    const finishing = Math.ceil(running.length * 0.02);
    for (let k = 0; k < finishing && running.length > 0; k++) {
      const i = Math.floor(random() * running.length);
      const { job, node } = running[i]!;
      running[i] = running[running.length - 1]!;
      running.pop();
      node.allocatedCpuMillis -= job.cpuMillis;
      node.allocatedMemoryBytes -= job.memoryBytes;
      const again = { ...job, uid: `${job.uid}-again-${r}` };
      waiting.push(fairShare ? inQueue(again) : again);
    }
    const { ms, placed } = round();
    times.push(ms);
    placedTotal += placed;
  }
  return {
    pending,
    nodes: nodeCount,
    policy,
    fairShare,
    firstRoundMs: first.ms,
    firstRoundPlaced: first.placed,
    roundMs: times.sort((a, b) => a - b),
    placedPerRound: placedTotal / Math.max(1, rounds),
  };
}
