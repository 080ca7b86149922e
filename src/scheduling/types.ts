// What a placement round reads and decides: plain data, no I/O.

export interface PendingJob {
  uid: string;
  cpuMillis: number;
  memoryBytes: number;
  /** How long the job says it runs: orderings that look at work use it. */
  durationMs: number;
  nodeSelector: Record<string, string>;
}

export interface NodeCapacity {
  name: string;
  cpuMillis: number;
  memoryBytes: number;
  allocatedCpuMillis: number;
  allocatedMemoryBytes: number;
  labels: Record<string, string>;
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
}
