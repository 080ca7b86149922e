// What critical-path-first placement buys for workflows, without I/O: seeded random DAG
// workflows replayed against the real placement algorithm in simulated time.
//
// Every workflow is submitted at time 0. A job is ready once every job it needs has ended. At
// time 0 and at every job end, one placement round (bestFit) runs over the ready jobs, listed in
// arrival order (workflow by workflow, each in its own job order); what it places runs for
// exactly its duration. The packing simulation (packing-simulation.ts) has no needs and rounds
// on a fixed tick; here a round can only change anything when a job ends, so the clock jumps
// from end to end and the makespan carries no tick rounding.
//
// The orderings compared differ only in what the round is told: critical-path-first gives each
// job its remaining path (remainingPathMs: its duration plus the longest chain waiting on it)
// for most-work-first to weigh; most-work-first alone sees durations; arrival keeps the list.
import { bestFit } from '../placement/best-fit.js';
import { criticalPathMs, remainingPathMs, type DagJob } from '../workflows/dag.js';
import type { Policy } from '../placement/policies.js';
import type { NodeCapacity, PendingJob } from '../placement/types.js';
import { seededRandom } from '../seeded-random.js';
import { emptyNodes } from './workload.js';

export const NODE_CPU_MILLIS = 4000;
export const NODE_MEMORY_BYTES = 16 * 1024 ** 3;

const MI = 1024 ** 2;
const MEMORY_STEP = 64 * MI;
const CPU_CHOICES = [250, 500, 750, 1000, 1500, 2000] as const;

export interface WorkflowJob extends DagJob {
  cpuMillis: number;
  memoryBytes: number;
}

export interface Workflow {
  name: string;
  /** In the workflow's own order, which is also a topological one: needs come first. */
  jobs: WorkflowJob[];
}

export interface WorkflowOptions {
  workflows: number;
  seed: number;
  minJobs?: number;
  maxJobs?: number;
}

/**
 * Layered random DAGs. A workflow of n jobs (uniform in minJobs–maxJobs) has 2 to min(n, 8)
 * layers; each job past the first layer needs one job of the layer before (so the layers are
 * real) and, with chance 0.3 each, up to two more earlier jobs. Durations follow a bounded
 * Pareto (α = 1) between 1 s and 60 s: median 2 s, mean 4.2 s, one job in twelve over 10 s. CPU is 250m–2,
 * memory log-uniform 256 MiB–4 GiB in steps of 64 MiB. Same seed, same workflows.
 */
export function generateWorkflows({ workflows, seed, minJobs = 4, maxJobs = 25 }: WorkflowOptions): Workflow[] {
  const random = seededRandom(seed);
  const below = (n: number) => Math.floor(random() * n);
  return Array.from({ length: workflows }, (_, w) => {
    const count = minJobs + below(maxJobs - minJobs + 1);
    const layerCount = count < 2 ? count : 2 + below(Math.min(count, 8) - 1);
    // One job per layer first, so none is empty; the rest anywhere.
    const layerOf = Array.from({ length: count }, (_, i) => (i < layerCount ? i : below(layerCount))).sort(
      (a, b) => a - b,
    );
    const names = layerOf.map((_, i) => `j${String(i).padStart(2, '0')}`);
    const jobs = layerOf.map((layer, i): WorkflowJob => {
      const needs = new Set<string>();
      if (layer > 0) {
        const previous = layerOf.flatMap((l, k) => (l === layer - 1 ? [k] : []));
        needs.add(names[previous[below(previous.length)]!]!);
        const earlier = layerOf.findIndex((l) => l === layer);
        for (let extra = 0; extra < 2; extra++) if (random() < 0.3) needs.add(names[below(earlier)]!);
      }
      const durationMs = Math.round(1000 / (1 - random() * (1 - 1 / 60)));
      const memoryBytes = Math.round((256 * MI * Math.pow(16, random())) / MEMORY_STEP) * MEMORY_STEP;
      return {
        name: names[i]!,
        needs: [...needs],
        durationMs,
        cpuMillis: CPU_CHOICES[below(CPU_CHOICES.length)]!,
        memoryBytes,
      };
    });
    return { name: `wf-${String(w).padStart(2, '0')}`, jobs };
  });
}

/** Smaller than the packing workload's 16 CPU / 64 GiB nodes, so that 30 workflows must queue. */
export function clusterNodes(count: number): NodeCapacity[] {
  return emptyNodes(count, NODE_CPU_MILLIS, NODE_MEMORY_BYTES);
}

export interface LowerBound {
  /** The longest critical path of any workflow. */
  criticalPathMs: number;
  /** All the work in the dominant resource over the cluster's capacity of it. */
  workMs: number;
  ms: number;
}

/** No schedule on `nodes` nodes finishes every workflow sooner than this. */
export function lowerBound(workflows: readonly Workflow[], nodes: number): LowerBound {
  let cpuWork = 0;
  let memoryWork = 0;
  let longestPath = 0;
  for (const w of workflows) {
    longestPath = Math.max(longestPath, criticalPathMs(w.jobs));
    for (const j of w.jobs) {
      cpuWork += j.cpuMillis * j.durationMs;
      memoryWork += j.memoryBytes * j.durationMs;
    }
  }
  const workMs = Math.max(cpuWork / (nodes * NODE_CPU_MILLIS), memoryWork / (nodes * NODE_MEMORY_BYTES));
  return { criticalPathMs: longestPath, workMs, ms: Math.max(longestPath, workMs) };
}

export interface Strategy {
  name: string;
  policy: Policy;
  /** Tell the round each job's remaining path (else most-work-first sees its duration only). */
  withPath: boolean;
}

export const STRATEGIES: readonly Strategy[] = [
  { name: 'critical-path-first', policy: { ordering: 'most-work-first', fit: 'best-fit' }, withPath: true },
  {
    name: 'most-work-first, durations only',
    policy: { ordering: 'most-work-first', fit: 'best-fit' },
    withPath: false,
  },
  { name: 'arrival', policy: { ordering: 'arrival', fit: 'best-fit' }, withPath: false },
];

/** One job's run: where and when. */
export interface JobRun {
  uid: string;
  workflow: number;
  node: string;
  startMs: number;
  endMs: number;
}

export interface MakespanResult {
  strategy: Strategy;
  makespanMs: number;
  /** Mean over workflows of the time their last job ended. */
  meanCompletionMs: number;
  runs: JobRun[];
}

interface SimJob {
  pending: PendingJob;
  workflow: number;
  /** Needs not yet ended. */
  waitingOn: number;
  started: boolean;
  dependents: SimJob[];
}

export function simulateWorkflows(
  workflows: readonly Workflow[],
  nodeCount: number,
  strategy: Strategy,
): MakespanResult {
  const all = simJobs(workflows, strategy.withPath);
  const byUid = new Map(all.map((j) => [j.pending.uid, j]));
  const nodes = clusterNodes(nodeCount);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  // Kept in arrival order: `all` is in workflow order, then job order.
  let ready = all.filter((j) => j.waitingOn === 0);
  const running: Array<{ job: SimJob; node: NodeCapacity; endMs: number }> = [];
  const runs: JobRun[] = [];
  const completionMs = new Array<number>(workflows.length).fill(0);
  let now = 0;
  for (;;) {
    if (ready.length > 0) {
      const round = bestFit(
        ready.map((j) => j.pending),
        nodes,
        strategy.policy,
      );
      if (round.unschedulable.length > 0)
        throw new Error(`${round.unschedulable[0]!.jobUid}: ${round.unschedulable[0]!.message}`);
      for (const p of round.placements) {
        const job = byUid.get(p.jobUid)!;
        const node = byName.get(p.node)!;
        node.allocatedCpuMillis += job.pending.cpuMillis;
        node.allocatedMemoryBytes += job.pending.memoryBytes;
        const endMs = now + job.pending.durationMs;
        job.started = true;
        running.push({ job, node, endMs });
        runs.push({ uid: job.pending.uid, workflow: job.workflow, node: node.name, startMs: now, endMs });
      }
      ready = ready.filter((j) => !j.started);
    }
    if (running.length === 0) break;
    now = Math.min(...running.map((r) => r.endMs));
    let released = false;
    for (let i = running.length - 1; i >= 0; i--) {
      const { job, node, endMs } = running[i]!;
      if (endMs > now) continue;
      running.splice(i, 1);
      node.allocatedCpuMillis -= job.pending.cpuMillis;
      node.allocatedMemoryBytes -= job.pending.memoryBytes;
      completionMs[job.workflow] = Math.max(completionMs[job.workflow]!, now);
      for (const d of job.dependents) if (--d.waitingOn === 0) released = true;
    }
    // Rebuilt rather than appended to: a released job takes its place in arrival order.
    if (released) ready = all.filter((j) => j.waitingOn === 0 && !j.started);
  }
  if (runs.length < all.length)
    throw new Error(`${all.length - runs.length} jobs never ran: a cycle among their needs?`);
  return {
    strategy,
    makespanMs: now,
    meanCompletionMs: completionMs.reduce((a, b) => a + b, 0) / Math.max(1, workflows.length),
    runs,
  };
}

export interface WorkflowCase {
  seed: number;
  jobs: number;
  lowerBound: LowerBound;
  /** One per strategy, in STRATEGIES' order. */
  results: MakespanResult[];
}

/** Every strategy on the workflows of each seed from `seed` on, `seeds` of them. */
export function compareStrategies(options: {
  seed: number;
  seeds: number;
  workflows: number;
  nodes: number;
}): WorkflowCase[] {
  return Array.from({ length: options.seeds }, (_, k) => {
    const seed = options.seed + k;
    const workflows = generateWorkflows({ workflows: options.workflows, seed });
    return {
      seed,
      jobs: workflows.reduce((sum, w) => sum + w.jobs.length, 0),
      lowerBound: lowerBound(workflows, options.nodes),
      results: STRATEGIES.map((strategy) => simulateWorkflows(workflows, options.nodes, strategy)),
    };
  });
}

function simJobs(workflows: readonly Workflow[], withPath: boolean): SimJob[] {
  const all: SimJob[] = [];
  workflows.forEach((w, index) => {
    const path = withPath ? remainingPathMs(w.jobs) : null;
    const byName = new Map<string, SimJob>();
    for (const j of w.jobs) {
      const pending: PendingJob = {
        uid: `${w.name}/${j.name}`,
        cpuMillis: j.cpuMillis,
        memoryBytes: j.memoryBytes,
        durationMs: j.durationMs,
        nodeSelector: {},
      };
      if (path) pending.pathMs = path.get(j.name)!;
      const job: SimJob = { pending, workflow: index, waitingOn: 0, started: false, dependents: [] };
      byName.set(j.name, job);
      all.push(job);
    }
    for (const j of w.jobs) {
      for (const need of new Set(j.needs)) {
        const before = byName.get(need);
        if (!before) continue;
        before.dependents.push(byName.get(j.name)!);
        byName.get(j.name)!.waitingOn++;
      }
    }
  });
  return all;
}
