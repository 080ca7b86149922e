// Packing quality without I/O: the workload replayed against the real placement algorithm in
// simulated time, to compare policies side by side in seconds instead of a ten-minute run each.
//
// Every job is pending at time 0. A placement round runs every ROUND_MS of simulated time (the
// controller's safety-net pass; in the real system NOTIFY wakes it sooner), over the backlog in
// the policy's order; jobs then hold their room for exactly their duration.
import { bestFit } from '../placement/best-fit.js';
import type { Policy } from '../placement/policies.js';
import { ROUND_LIMIT } from '../placement/controller.js';
import type { NodeCapacity, PendingJob } from '../placement/types.js';
import {
  NODE_CPU_MILLIS,
  NODE_MEMORY_BYTES,
  asPendingJob,
  lowerBoundMs,
  workloadNodes,
  type WorkloadJob,
} from './workload.js';

const ROUND_MS = 100;

export interface SimulationResult {
  policy: Policy;
  finishMs: number;
  lowerBoundMs: number;
  /** Allocated over capacity, averaged over the time some job was still waiting. */
  cpuUseWhileWaiting: number;
  memoryUseWhileWaiting: number;
  /** How long the jobs waited to be placed, on average. */
  meanWaitMs: number;
  /** Use over time, one sample per simulated second. */
  samples: Array<{ atMs: number; cpuUse: number; memoryUse: number; pending: number }>;
}

export function simulatePacking(workload: readonly WorkloadJob[], nodeCount: number, policy: Policy): SimulationResult {
  const nodes = workloadNodes(nodeCount);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  let pending = workload.map(asPendingJob);
  const running: Array<{ job: PendingJob; node: NodeCapacity; endsAt: number }> = [];
  let now = 0;
  let waitedMs = 0;
  let cpuArea = 0;
  let memoryArea = 0;
  let waitingMs = 0;
  const totalCpu = nodeCount * NODE_CPU_MILLIS;
  const totalMemory = nodeCount * NODE_MEMORY_BYTES;
  let allocatedCpu = 0;
  let allocatedMemory = 0;
  const samples: SimulationResult['samples'] = [];
  while (pending.length > 0 || running.length > 0) {
    if (pending.length > 0) {
      // As the controller does: the oldest ROUND_LIMIT pending jobs, ordered by the policy.
      const round = bestFit(pending.length > ROUND_LIMIT ? pending.slice(0, ROUND_LIMIT) : pending, nodes, policy);
      if (round.unschedulable.length > 0)
        throw new Error(`${round.unschedulable[0]!.jobUid}: ${round.unschedulable[0]!.message}`);
      const placed = new Map(round.placements.map((p) => [p.jobUid, byName.get(p.node)!]));
      for (const job of pending) {
        const node = placed.get(job.uid);
        if (!node) continue;
        node.allocatedCpuMillis += job.cpuMillis;
        node.allocatedMemoryBytes += job.memoryBytes;
        allocatedCpu += job.cpuMillis;
        allocatedMemory += job.memoryBytes;
        running.push({ job, node, endsAt: now + job.durationMs });
        waitedMs += now;
      }
      if (placed.size > 0) pending = pending.filter((j) => !placed.has(j.uid));
    }
    if (samples.length === 0 || now - samples[samples.length - 1]!.atMs >= 1000) {
      samples.push({
        atMs: now,
        cpuUse: allocatedCpu / totalCpu,
        memoryUse: allocatedMemory / totalMemory,
        pending: pending.length,
      });
    }
    const next = pending.length > 0 ? now + ROUND_MS : Math.min(...running.map((r) => r.endsAt));
    if (pending.length > 0) {
      cpuArea += (allocatedCpu / totalCpu) * (next - now);
      memoryArea += (allocatedMemory / totalMemory) * (next - now);
      waitingMs += next - now;
    }
    now = next;
    for (let i = running.length - 1; i >= 0; i--) {
      const r = running[i]!;
      if (r.endsAt > now) continue;
      r.node.allocatedCpuMillis -= r.job.cpuMillis;
      r.node.allocatedMemoryBytes -= r.job.memoryBytes;
      allocatedCpu -= r.job.cpuMillis;
      allocatedMemory -= r.job.memoryBytes;
      running.splice(i, 1);
    }
  }
  return {
    policy,
    finishMs: now,
    lowerBoundMs: lowerBoundMs(workload, nodeCount),
    cpuUseWhileWaiting: waitingMs ? cpuArea / waitingMs : 0,
    memoryUseWhileWaiting: waitingMs ? memoryArea / waitingMs : 0,
    meanWaitMs: waitedMs / workload.length,
    samples,
  };
}
