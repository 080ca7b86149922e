// The packing workload: a seeded backlog of jobs whose sizes make packing hard on purpose.
//
// Nodes are 16 CPU / 64 GiB (4 GiB per CPU). Jobs come in four kinds, so that CPU-heavy and
// memory-heavy jobs must share nodes for either resource to fill up:
//
//   kind          share  CPU                     memory per CPU
//   small          45 %  250m, 500m, 750m, 1     2–6 GiB
//   cpu-heavy      20 %  2, 3 or 4               0.5–1.5 GiB
//   memory-heavy   20 %  500m, 1 or 2            8–16 GiB
//   large          15 %  4, 6 or 8               3–5 GiB
//
// On average a job asks for about 2 CPU and 8 GiB, the nodes' own ratio, so a perfect packer
// could fill both. Memory is rounded to 64 MiB. Durations are log-uniform between 30 s and
// 10 min (many short jobs, a few long ones), divided by the time scale (10 by default, so 3 s
// to 60 s) to keep a run under ten minutes. The same seed gives the same jobs, in the same order.
import { seededRandom } from '../seeded-random.js';
import type { NodeCapacity, PendingJob } from '../placement/types.js';

export const NODE_CPU_MILLIS = 16_000;
export const NODE_MEMORY_BYTES = 64 * 1024 ** 3;

const GI = 1024 ** 3;
const MEMORY_STEP = 64 * 1024 ** 2;

export interface WorkloadJob {
  name: string;
  kind: JobKind;
  cpuMillis: number;
  memoryBytes: number;
  durationMs: number;
}

export type JobKind = 'small' | 'cpu-heavy' | 'memory-heavy' | 'large';

interface KindSpec {
  kind: JobKind;
  share: number;
  cpuMillis: readonly number[];
  gibPerCpu: readonly [number, number];
}

const KINDS: readonly KindSpec[] = [
  { kind: 'small', share: 0.45, cpuMillis: [250, 500, 750, 1000], gibPerCpu: [2, 6] },
  { kind: 'cpu-heavy', share: 0.2, cpuMillis: [2000, 3000, 4000], gibPerCpu: [0.5, 1.5] },
  { kind: 'memory-heavy', share: 0.2, cpuMillis: [500, 1000, 2000], gibPerCpu: [8, 16] },
  { kind: 'large', share: 0.15, cpuMillis: [4000, 6000, 8000], gibPerCpu: [3, 5] },
];

const SHORTEST_MS = 30_000;
const LONGEST_MS = 600_000;

export interface WorkloadOptions {
  jobs: number;
  seed: number;
  /** Durations are divided by this (10: 30 s–10 min become 3 s–60 s). */
  timeScale: number;
}

export function generateWorkload({ jobs, seed, timeScale }: WorkloadOptions): WorkloadJob[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  return Array.from({ length: jobs }, (_, i) => {
    let roll = random();
    const spec = KINDS.find((k) => (roll -= k.share) < 0) ?? KINDS[KINDS.length - 1]!;
    const cpuMillis = pick(spec.cpuMillis);
    const [low, high] = spec.gibPerCpu;
    const gib = (cpuMillis / 1000) * (low + random() * (high - low));
    const memoryBytes = Math.max(MEMORY_STEP, Math.round((gib * GI) / MEMORY_STEP) * MEMORY_STEP);
    const durationMs = Math.round((SHORTEST_MS * Math.pow(LONGEST_MS / SHORTEST_MS, random())) / timeScale);
    return { name: `pack-${String(i).padStart(6, '0')}`, kind: spec.kind, cpuMillis, memoryBytes, durationMs };
  });
}

/**
 * The finish time no scheduler can beat on `nodes` nodes: all the CPU-seconds spread over all
 * the CPU, all the memory-seconds over all the memory, or the longest job, whichever is larger.
 */
export function lowerBoundMs(jobs: readonly WorkloadJob[], nodes: number): number {
  let cpuWork = 0;
  let memoryWork = 0;
  let longest = 0;
  for (const j of jobs) {
    cpuWork += j.cpuMillis * j.durationMs;
    memoryWork += j.memoryBytes * j.durationMs;
    longest = Math.max(longest, j.durationMs);
  }
  return Math.max(cpuWork / (nodes * NODE_CPU_MILLIS), memoryWork / (nodes * NODE_MEMORY_BYTES), longest);
}

/** `count` empty nodes of the workload's shape, as the placement algorithm sees nodes. */
export function workloadNodes(count: number): NodeCapacity[] {
  return emptyNodes(count, NODE_CPU_MILLIS, NODE_MEMORY_BYTES);
}

/** `count` empty, unlabelled nodes of one size, as the placement algorithm sees nodes. */
export function emptyNodes(count: number, cpuMillis: number, memoryBytes: number): NodeCapacity[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `node-${i}`,
    cpuMillis,
    memoryBytes,
    allocatedCpuMillis: 0,
    allocatedMemoryBytes: 0,
    labels: {},
  }));
}

/** A workload job as the placement algorithm sees a pending job. */
export function asPendingJob(job: WorkloadJob): PendingJob {
  return {
    uid: job.name,
    cpuMillis: job.cpuMillis,
    memoryBytes: job.memoryBytes,
    durationMs: job.durationMs,
    nodeSelector: {},
  };
}
