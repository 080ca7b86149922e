// Best-fit placement, pure: plain data in, decisions out, no I/O and no clock.
//
// Each job goes, in the order given, to the node that fits it most tightly: the node whose
// free CPU and memory, after taking the job, would be smallest (each as a share of that node's
// capacity, summed). Tight packing keeps large holes free for large jobs.

export interface PendingJob {
  uid: string;
  cpuMillis: number;
  memoryBytes: number;
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

export function matchesSelector(labels: Record<string, string>, selector: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector)) if (labels[key] !== value) return false;
  return true;
}

export function bestFit(jobs: readonly PendingJob[], nodes: readonly NodeCapacity[]): PlacementRound {
  const free = nodes.map((n) => ({
    node: n,
    cpu: n.cpuMillis - n.allocatedCpuMillis,
    memory: n.memoryBytes - n.allocatedMemoryBytes,
  }));
  const placements: Placement[] = [];
  const unschedulable: Unschedulable[] = [];
  for (const job of jobs) {
    let best: (typeof free)[number] | undefined;
    let bestScore = Infinity;
    let anyCouldEverFit = false;
    for (const candidate of free) {
      const { node } = candidate;
      if (!matchesSelector(node.labels, job.nodeSelector)) continue;
      if (node.cpuMillis >= job.cpuMillis && node.memoryBytes >= job.memoryBytes) anyCouldEverFit = true;
      if (candidate.cpu < job.cpuMillis || candidate.memory < job.memoryBytes) continue;
      const score = (candidate.cpu - job.cpuMillis) / node.cpuMillis + (candidate.memory - job.memoryBytes) / node.memoryBytes;
      if (score < bestScore) {
        bestScore = score;
        best = candidate;
      }
    }
    if (best) {
      best.cpu -= job.cpuMillis;
      best.memory -= job.memoryBytes;
      placements.push({ jobUid: job.uid, node: best.node.name });
    } else if (!anyCouldEverFit) {
      unschedulable.push({ jobUid: job.uid, message: unschedulableMessage(job, nodes) });
    }
  }
  return { placements, unschedulable };
}

function unschedulableMessage(job: PendingJob, nodes: readonly NodeCapacity[]): string {
  const matching = nodes.filter((n) => matchesSelector(n.labels, job.nodeSelector));
  if (matching.length === 0) {
    const selector = Object.entries(job.nodeSelector).map(([k, v]) => `${k}=${v}`).join(',');
    return `0/${nodes.length} nodes are available: none matches nodeSelector ${selector || '{}'}`;
  }
  const tooSmallCpu = matching.filter((n) => n.cpuMillis < job.cpuMillis).length;
  const tooSmallMemory = matching.filter((n) => n.memoryBytes < job.memoryBytes).length;
  const parts: string[] = [];
  if (tooSmallCpu) parts.push(`${tooSmallCpu} with too little CPU capacity`);
  if (tooSmallMemory) parts.push(`${tooSmallMemory} with too little memory capacity`);
  return `0/${nodes.length} nodes are available: the job is larger than every node (${parts.join(', ')})`;
}
