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
  | 'most-work-first';

export type FitRule =
  /** The node left with the least free CPU + memory (each as a share of the node). */
  | 'best-fit'
  /** The node left with the smallest larger leftover: keeps CPU and memory free in step. */
  | 'dominant-balance';

export interface Policy {
  ordering: Ordering;
  fit: FitRule;
}

export const ORDERINGS: readonly Ordering[] = ['arrival', 'largest-first', 'most-work-first'];
export const FIT_RULES: readonly FitRule[] = ['best-fit', 'dominant-balance'];

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

/** The jobs in the order the policy considers them; a stable sort, so ties keep arrival order. */
export function orderJobs(jobs: readonly PendingJob[], ordering: Ordering, nodes: readonly NodeCapacity[]): readonly PendingJob[] {
  if (ordering === 'arrival') return jobs;
  let totalCpu = 0;
  let totalMemory = 0;
  for (const n of nodes) {
    totalCpu += n.cpuMillis;
    totalMemory += n.memoryBytes;
  }
  const share = (j: PendingJob) => Math.max(j.cpuMillis / (totalCpu || 1), j.memoryBytes / (totalMemory || 1));
  const key = ordering === 'largest-first' ? share : (j: PendingJob) => share(j) * j.durationMs;
  const keys = new Map(jobs.map((j) => [j, key(j)]));
  return [...jobs].sort((a, b) => keys.get(b)! - keys.get(a)!);
}

/** How badly a node fits: lower is better. Free and demand are shares of the node's capacity. */
export function fitScore(fit: FitRule, cpuLeft: number, memoryLeft: number): number {
  const sum = cpuLeft + memoryLeft;
  // dominant-balance breaks ties of the larger leftover by the sum, so equal maxima still
  // prefer the tighter node.
  return fit === 'best-fit' ? sum : Math.max(cpuLeft, memoryLeft) + sum / 1024;
}
