// Placement policies: the order a round considers its pending jobs in, and the rule that picks
// a node for each. `bench packing --compare` (src/bench/packing-compare.ts) measures every one
// on the same workload; DEFAULT_POLICY is the one that packed best there.
import type { NodeCapacity, PendingJob } from './types.js';

export type Ordering =
  /** Oldest first, as submitted. */
  | 'arrival'
  /** Largest dominant share first (the job's larger fraction of the cluster's CPU or memory). */
  | 'largest-first'
  /** Most work first: dominant share × duration, longest-processing-time-first in two dimensions. */
  | 'most-work-first'
  /**
   * Most work first, drawn from two queues (jobs heavier on CPU, jobs heavier on memory) by
   * whichever resource the cluster has more of free at that moment: dominant-resource aware,
   * so that neither CPU nor memory fills up while the other is left over.
   */
  | 'most-work-balanced';

export type FitRule =
  /** The node left with the least free CPU + memory (each as a share of the node). */
  | 'best-fit'
  /**
   * Best fit, plus twice the gap between the node's CPU and memory leftovers: a node should not
   * end up with CPU free and no memory (or the reverse), room no job can use.
   */
  | 'balanced-fit';

export interface Policy {
  ordering: Ordering;
  fit: FitRule;
}

export const ORDERINGS: readonly Ordering[] = ['arrival', 'largest-first', 'most-work-first', 'most-work-balanced'];
export const FIT_RULES: readonly FitRule[] = ['best-fit', 'balanced-fit'];

// balanced-fit simulates 0.4–0.7 % faster on the packing workload, but it leaves a lone small
// job's node for an empty one when the job's shape is off the node's (a 1 CPU / 1 GiB job on a
// 4 CPU / 8 GiB node that holds one job), spreading where best fit packs; and on the real
// 10,000 × 100 run it did no better (1.046 × the lower bound against best fit's 1.039,
// bench/results/packing-2026-11-29-20-59-20.md and -20-53-51.md). Best fit stays the default.
export const DEFAULT_POLICY: Policy = { ordering: 'most-work-first', fit: 'best-fit' };

export function policyName(policy: Policy): string {
  return `${policy.ordering} + ${policy.fit}`;
}

export function parsePolicy(text: string): Policy {
  const [ordering, fit = DEFAULT_POLICY.fit] = text.split('+').map((s) => s.trim());
  if (!ORDERINGS.includes(ordering as Ordering)) {
    throw new Error(`placement policy: "${ordering}" is not an ordering (one of ${ORDERINGS.join(', ')})`);
  }
  if (!FIT_RULES.includes(fit as FitRule)) {
    throw new Error(`placement policy: "${fit}" is not a fit rule (one of ${FIT_RULES.join(', ')})`);
  }
  return { ordering: ordering as Ordering, fit: fit as FitRule };
}

/** Where the cluster stands while a round places jobs: shares of all its CPU and memory in use. */
export interface ClusterUse {
  cpu: number;
  memory: number;
}

/** The jobs in the order the policy considers them, one at a time, given the cluster's use. */
export interface JobSequence {
  next(use: ClusterUse): PendingJob | undefined;
}

export function jobSequence(
  jobs: readonly PendingJob[],
  ordering: Ordering,
  nodes: readonly NodeCapacity[],
): JobSequence {
  if (ordering !== 'most-work-balanced') {
    const ordered = orderJobs(jobs, ordering, nodes);
    let i = 0;
    return { next: () => ordered[i++] };
  }
  const { cpu: totalCpu, memory: totalMemory } = capacityOf(nodes);
  const ordered = orderJobs(jobs, 'most-work-first', nodes);
  const cpuHeavy = ordered.filter((j) => j.cpuMillis / totalCpu >= j.memoryBytes / totalMemory);
  const memoryHeavy = ordered.filter((j) => j.cpuMillis / totalCpu < j.memoryBytes / totalMemory);
  let c = 0;
  let m = 0;
  return {
    next(use) {
      const preferCpu = use.cpu <= use.memory; // more CPU free: give it a job that needs CPU
      if ((preferCpu && c < cpuHeavy.length) || m >= memoryHeavy.length) return cpuHeavy[c++];
      return memoryHeavy[m++];
    },
  };
}

function capacityOf(nodes: readonly NodeCapacity[]): ClusterUse {
  let cpu = 0;
  let memory = 0;
  for (const n of nodes) {
    cpu += n.cpuMillis;
    memory += n.memoryBytes;
  }
  return { cpu: cpu || 1, memory: memory || 1 };
}

/**
 * A static ordering of the jobs, largest key first, ties in arrival order. Keys are ranked to
 * 2^16 levels (of the largest key) and the jobs counting-sorted by level: two passes over the
 * jobs whatever their number, where even a native sort was the larger part of a 10,000-job round.
 */
export function orderJobs(
  jobs: readonly PendingJob[],
  ordering: Exclude<Ordering, 'most-work-balanced'>,
  nodes: readonly NodeCapacity[],
): readonly PendingJob[] {
  // Fair share orders each lane, and most lanes hold nothing: they cost nothing either.
  if (ordering === 'arrival' || jobs.length < 2) return jobs;
  const { cpu: totalCpu, memory: totalMemory } = capacityOf(nodes);
  const keys = new Float64Array(jobs.length);
  let largest = 0;
  for (let i = 0; i < jobs.length; i++) {
    const j = jobs[i]!;
    const share = Math.max(j.cpuMillis / totalCpu, j.memoryBytes / totalMemory);
    const key = ordering === 'largest-first' ? share : share * (j.pathMs ?? j.durationMs);
    keys[i] = key;
    if (key > largest) largest = key;
  }
  // Level 0 holds the largest keys; a stable counting sort keeps arrival order within a level.
  const levels = new Uint32Array(jobs.length);
  const starts = new Uint32Array(KEY_LEVELS + 1);
  for (let i = 0; i < jobs.length; i++) {
    const level = largest > 0 ? KEY_LEVELS - 1 - Math.floor((keys[i]! / largest) * (KEY_LEVELS - 1)) : 0;
    levels[i] = level;
    starts[level + 1]!++;
  }
  for (let level = 1; level <= KEY_LEVELS; level++) starts[level]! += starts[level - 1]!;
  const ordered = new Array<PendingJob>(jobs.length);
  for (let i = 0; i < jobs.length; i++) ordered[starts[levels[i]!]!++] = jobs[i]!;
  return ordered;
}

const KEY_LEVELS = 2 ** 16;

/** How badly a node fits: lower is better. Free and demand are shares of the node's capacity. */
export function fitScore(fit: FitRule, cpuLeft: number, memoryLeft: number): number {
  const sum = cpuLeft + memoryLeft;
  // Never below the sum: the free-capacity index prunes its search by a floor on the sum.
  return fit === 'best-fit' ? sum : sum + 2 * Math.abs(cpuLeft - memoryLeft);
}
