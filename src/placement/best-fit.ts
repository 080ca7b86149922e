// A placement round, pure: plain data in, decisions out, no I/O and no clock.
//
// The policy orders the round's pending jobs (src/placement/policies.ts); each job in turn goes
// to the node that fits it best by the policy's rule: by default the node whose free CPU and
// memory, after taking the job, would be smallest (each as a share of that node's capacity).
// Tight packing keeps large holes free for large jobs.
import { FreeCapacityIndex, type Demand, type NodeState } from './node-index.js';
import { DEFAULT_POLICY, jobSequence, type ClusterUse, type Policy } from './policies.js';
import { ShareSequence, type Shares } from '../fair-share/share-order.js';
import type { NodeCapacity, PendingJob, Placement, PlacementRound, Unschedulable } from './types.js';

export type { NodeCapacity, PendingJob, Placement, PlacementRound, Unschedulable, Waiting } from './types.js';

export function matchesSelector(labels: Record<string, string>, selector: Record<string, string>): boolean {
  for (const key in selector) if (labels[key] !== selector[key]) return false;
  return true;
}

/** What a job asks of its node beyond room: node labels, its workflow's pool, an image. */
export interface Matching {
  /** Test-only: broken variants of the matching (src/testing/broken-guards.ts), read once per round. */
  ignoreLabels?: boolean;
  ignorePool?: boolean;
  ignoreImage?: boolean;
}

export function nodeMatches(node: NodeCapacity, job: PendingJob, matching: Matching = {}): boolean {
  if (!matching.ignoreLabels && !matchesSelector(node.labels, job.nodeSelector)) return false;
  if (!matching.ignorePool && job.pool && node.labels.pool !== job.pool) return false;
  if (!matching.ignoreImage && job.image && !(node.images ?? []).includes(job.image)) return false;
  return true;
}

function hasSelector(job: PendingJob): boolean {
  if (job.pool || job.image) return true;
  for (const key in job.nodeSelector) if (Object.hasOwn(job.nodeSelector, key)) return true;
  return false;
}

/**
 * Sizes that found no room this round. Room only shrinks within a round, so a job at least as
 * large as one of them in both CPU and memory cannot fit either: it is skipped without a search,
 * which keeps a full cluster with a long backlog cheap.
 */
class NoRoomFrontier {
  private sizes: Array<{ cpu: number; memory: number }> = [];

  covers(job: Demand): boolean {
    for (const s of this.sizes) if (job.cpuMillis >= s.cpu && job.memoryBytes >= s.memory) return true;
    return false;
  }

  add(job: PendingJob): void {
    this.sizes = this.sizes.filter((s) => s.cpu < job.cpuMillis || s.memory < job.memoryBytes);
    this.sizes.push({ cpu: job.cpuMillis, memory: job.memoryBytes });
  }
}

/**
 * One round. With `shares`, queues take turns by weight within their limits (src/fair-share/share-order.ts)
 * and the round says why each job it did not place waits; without, one backlog in the
 * policy's order (the packing simulations).
 */
export function bestFit(
  jobs: readonly PendingJob[],
  nodes: readonly NodeCapacity[],
  policy: Policy = DEFAULT_POLICY,
  matching: Matching = {},
  shares?: Shares,
): PlacementRound {
  const index = new FreeCapacityIndex(nodes);
  const noRoom = new NoRoomFrontier();
  const placements: Placement[] = [];
  const unschedulable: Unschedulable[] = [];
  const use = clusterUse(nodes);
  // One pass first: jobs no node could ever hold are reported, not ordered; the others' smallest
  // CPU and memory tell when the cluster is too full for any of them (the loop stops there).
  const candidates: PendingJob[] = [];
  let selectiveJobs = 0;
  const smallest: Demand = { cpuMillis: Infinity, memoryBytes: Infinity };
  for (const job of jobs) {
    const selective = hasSelector(job);
    const couldEverFit = selective
      ? nodes.some(
          (n) => nodeMatches(n, job, matching) && n.cpuMillis >= job.cpuMillis && n.memoryBytes >= job.memoryBytes,
        )
      : index.couldEverHold(job);
    if (!couldEverFit) {
      unschedulable.push({ jobUid: job.uid, message: unschedulableMessage(job, nodes, matching) });
      continue;
    }
    candidates.push(job);
    if (selective) selectiveJobs++;
    else {
      smallest.cpuMillis = Math.min(smallest.cpuMillis, job.cpuMillis);
      smallest.memoryBytes = Math.min(smallest.memoryBytes, job.memoryBytes);
    }
  }
  const shared = shares ? new ShareSequence(candidates, policy.ordering, nodes, shares) : null;
  const sequence = shared ?? jobSequence(candidates, policy.ordering, nodes);
  for (let job = sequence.next(use); job; job = sequence.next(use)) {
    if (selectiveJobs === 0 || !hasSelector(job)) {
      if (noRoom.covers(job)) continue;
      const state = index.best(job, policy.fit);
      if (!state) {
        noRoom.add(job);
        // No node with room for the smallest CPU and the smallest memory asked: no room for
        // any job, and the rest of a long backlog is done.
        if (selectiveJobs === 0 && !index.best(smallest, policy.fit)) break;
        continue;
      }
      place(job, state);
    } else {
      const state = index.bestWhere(job, policy.fit, (n) => nodeMatches(n, job, matching));
      if (state) place(job, state);
    }
  }
  if (!shared) return { placements, unschedulable, waiting: [] };
  const placed = new Set(placements.map((p) => p.jobUid));
  return { placements, unschedulable, waiting: shared.waiting(candidates, placed) };

  function place(job: PendingJob, state: NodeState): void {
    shared?.placed(job);
    index.take(state, job);
    use.cpu += job.cpuMillis / use.cpuCapacity;
    use.memory += job.memoryBytes / use.memoryCapacity;
    placements.push({ jobUid: job.uid, node: state.node.name });
  }
}

/** The cluster's CPU and memory in use (shares of its capacity), kept up to date as the round goes. */
function clusterUse(nodes: readonly NodeCapacity[]): ClusterUse & { cpuCapacity: number; memoryCapacity: number } {
  let cpu = 0;
  let memory = 0;
  let cpuCapacity = 0;
  let memoryCapacity = 0;
  for (const n of nodes) {
    cpu += n.allocatedCpuMillis;
    memory += n.allocatedMemoryBytes;
    cpuCapacity += n.cpuMillis;
    memoryCapacity += n.memoryBytes;
  }
  cpuCapacity ||= 1;
  memoryCapacity ||= 1;
  return { cpu: cpu / cpuCapacity, memory: memory / memoryCapacity, cpuCapacity, memoryCapacity };
}

function unschedulableMessage(job: PendingJob, nodes: readonly NodeCapacity[], rules: Matching): string {
  const matching = nodes.filter((n) => nodeMatches(n, job, rules));
  if (matching.length === 0) {
    const asked = Object.entries(job.nodeSelector).map(([k, v]) => `${k}=${v}`);
    if (job.pool) asked.push(`pool=${job.pool}`);
    const wants = `nodeSelector ${asked.join(',') || '{}'}${job.image ? ` with image ${job.image}` : ''}`;
    return `0/${nodes.length} nodes are available: none matches ${wants}`;
  }
  const tooSmallCpu = matching.filter((n) => n.cpuMillis < job.cpuMillis).length;
  const tooSmallMemory = matching.filter((n) => n.memoryBytes < job.memoryBytes).length;
  const parts: string[] = [];
  if (tooSmallCpu) parts.push(`${tooSmallCpu} with too little CPU capacity`);
  if (tooSmallMemory) parts.push(`${tooSmallMemory} with too little memory capacity`);
  return `0/${nodes.length} nodes are available: the job is larger than every node (${parts.join(', ')})`;
}
