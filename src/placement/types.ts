// What a placement round reads and decides: plain data, no I/O.
import type { Lane } from '../domain/resources.js';

export interface PendingJob {
  uid: string;
  cpuMillis: number;
  memoryBytes: number;
  /** How long the job says it runs: orderings that look at work use it. */
  durationMs: number;
  /**
   * Its duration plus the longest chain of jobs of its workflow waiting on it (just its duration
   * for a lone job): most-work-first weighs this, so a workflow's critical path starts first.
   */
  pathMs?: number;
  nodeSelector: Record<string, string>;
  /** The image the node must hold, if any. */
  image?: string | null;
  /** The node label `pool` it must run in, if any (its workflow's pool). */
  pool?: string | null;
  /** Its namespace and its queue (namespace/name) and lane, when queues share the cluster. */
  namespace?: string;
  queue?: string;
  lane?: Lane;
}

export interface NodeCapacity {
  name: string;
  cpuMillis: number;
  memoryBytes: number;
  allocatedCpuMillis: number;
  allocatedMemoryBytes: number;
  labels: Record<string, string>;
  /** Images the node holds. */
  images?: readonly string[];
  /**
   * How many more jobs it may take now, whatever their size (its max jobs at once, and the bound
   * on what it has not claimed yet); unbounded when absent (the packing simulations).
   */
  freeSlots?: number;
}

export interface Placement {
  jobUid: string;
  node: string;
}

export interface Unschedulable {
  jobUid: string;
  message: string;
}

export interface PlacementRound {
  placements: Placement[];
  /** Jobs that no node (matching their selector) could hold even when empty. */
  unschedulable: Unschedulable[];
  /** Why each other job of the round was not placed (when the round shares by queue). */
  waiting: Waiting[];
}

export interface Waiting {
  jobUid: string;
  reason: 'QueueAtLimit' | 'QuotaExceeded' | 'WaitingForShare';
  message: string;
}
