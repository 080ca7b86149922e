// The placement algorithm alone (no I/O) at scale: rounds over P pending jobs and N nodes, the
// cluster filling up and turning over as it would in a busy day.
//
// Round 1 meets empty nodes (the most placements in one round). After it, each round first
// lets a random 2 % of the running jobs finish, then places into the room they left, with
// every other job still pending: the steady state of a long backlog.
import { bestFit } from '../scheduling/best-fit.js';
import type { Policy } from '../scheduling/policies.js';
import type { NodeCapacity, PendingJob } from '../scheduling/types.js';
import { seededRandom } from '../seeded-random.js';
import { asPendingJob, generateWorkload, workloadNodes } from './workload.js';

export interface ScaleCase {
  pending: number;
  nodes: number;
}

export interface ScaleResult extends ScaleCase {
  policy: Policy;
  firstRoundMs: number;
  firstRoundPlaced: number;
  /** Steady-state rounds, sorted. */
  roundMs: number[];
  placedPerRound: number;
}

export function runScaleCase({ pending, nodes: nodeCount }: ScaleCase, policy: Policy, rounds: number, seed = 1): ScaleResult {
  const random = seededRandom(seed);
  const jobs = generateWorkload({ jobs: pending, seed, timeScale: 1 }).map(asPendingJob);
  const nodes = workloadNodes(nodeCount);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const running: Array<{ job: PendingJob; node: NodeCapacity }> = [];
  let waiting = jobs;
  const round = () => {
    const started = performance.now();
    const result = bestFit(waiting, nodes, policy);
    const ms = performance.now() - started;
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
      waiting.push({ ...job, uid: `${job.uid}-again-${r}` });
    }
    const { ms, placed } = round();
    times.push(ms);
    placedTotal += placed;
  }
  return {
    pending,
    nodes: nodeCount,
    policy,
    firstRoundMs: first.ms,
    firstRoundPlaced: first.placed,
    roundMs: times.sort((a, b) => a - b),
    placedPerRound: placedTotal / Math.max(1, rounds),
  };
}
