// What the fairness benchmark computes from a run, once the database has told it when each job
// was created, first ran and finished (all by the database's clock). Pure: rows in, figures out.
import { percentile } from '../report/results.js';

export interface JobTiming {
  /** What the job is counted under: its namespace (flood case) or its queue (weights case). */
  group: string;
  /** jobs.created_at: the submit's transaction. */
  createdMs: number;
  /** Its first assignment's creation: the placement's commit. */
  placedMs: number | null;
  /** The job's first Running row in the history; null if it never ran. */
  runningMs: number | null;
  finishedMs: number | null;
  cpuMillis: number;
  durationMs: number;
  /** The submitting client's clock (the same machine's): request sent, 201 received. */
  sentMs?: number;
  answeredMs?: number;
}

export interface WaitStats {
  jobs: number;
  /** submit → running, over the jobs that ran */
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  meanMs: number | null;
  /** The wait in two: submit → placed (the scheduler), placed → running (the node's claim). */
  toPlacedP50Ms: number | null;
  toPlacedP99Ms: number | null;
  placedToRunningP50Ms: number | null;
  placedToRunningP99Ms: number | null;
  /** Jobs the client timed: request sent → running; and from the 201 (the job certainly committed) to its placement. */
  sentToRunningP99Ms: number | null;
  answeredToPlacedP50Ms: number | null;
  answeredToPlacedP99Ms: number | null;
}

export function waitStats(jobs: readonly JobTiming[]): WaitStats {
  const ran = jobs.filter((j) => j.runningMs !== null);
  const waits = ran.map((j) => j.runningMs! - j.createdMs);
  const placed = ran.filter((j) => j.placedMs !== null);
  const toPlaced = placed.map((j) => j.placedMs! - j.createdMs);
  const toRunning = placed.map((j) => j.runningMs! - j.placedMs!);
  const timed = placed.filter((j) => j.sentMs !== undefined && j.answeredMs !== undefined);
  const answeredToPlaced = timed.map((j) => j.placedMs! - j.answeredMs!);
  return {
    jobs: jobs.length,
    p50Ms: percentile(waits, 50),
    p99Ms: percentile(waits, 99),
    maxMs: waits.length ? Math.max(...waits) : null,
    meanMs: waits.length ? waits.reduce((a, b) => a + b, 0) / waits.length : null,
    toPlacedP50Ms: percentile(toPlaced, 50),
    toPlacedP99Ms: percentile(toPlaced, 99),
    placedToRunningP50Ms: percentile(toRunning, 50),
    placedToRunningP99Ms: percentile(toRunning, 99),
    sentToRunningP99Ms: percentile(
      timed.map((j) => j.runningMs! - j.sentMs!),
      99,
    ),
    answeredToPlacedP50Ms: percentile(answeredToPlaced, 50),
    answeredToPlacedP99Ms: percentile(answeredToPlaced, 99),
  };
}

export interface FloodFinish {
  /** The first flood job's creation → the last flood job's finish. */
  finishMs: number;
  /** The flood's work over the cluster's CPU (or its longest job, if longer). */
  lowerBoundMs: number;
  /** Also counting the other jobs' work that ran inside the flood's window (their nominal runs). */
  lowerBoundWithOthersMs: number;
  /** CPU-ms of the other jobs' runs inside the window. */
  othersWorkMs: number;
}

/**
 * How long the flood took against what no scheduler could beat. The trickle runs beside the
 * flood (with fair share, at once), so the second bound also counts the CPU its runs took inside
 * the flood's window: the flood cannot have had that part of the cluster.
 */
export function floodFinish(
  flood: readonly JobTiming[],
  others: readonly JobTiming[],
  clusterCpuMillis: number,
): FloodFinish {
  const start = Math.min(...flood.map((j) => j.createdMs));
  const end = Math.max(...flood.map((j) => j.finishedMs ?? j.createdMs));
  const work = flood.reduce((sum, j) => sum + j.cpuMillis * j.durationMs, 0) / clusterCpuMillis;
  const longest = Math.max(...flood.map((j) => j.durationMs));
  const othersWork = others.reduce((sum, j) => {
    if (j.runningMs === null) return sum;
    const overlap = Math.min(end, j.runningMs + j.durationMs) - Math.max(start, j.runningMs);
    return sum + Math.max(0, overlap) * j.cpuMillis;
  }, 0);
  return {
    finishMs: end - start,
    lowerBoundMs: Math.max(longest, work),
    lowerBoundWithOthersMs: Math.max(longest, work + othersWork / clusterCpuMillis),
    othersWorkMs: othersWork / 1000,
  };
}

export interface UseSample {
  /** ms since the run's clock started */
  atMs: number;
  /** allocated over capacity, summed over nodes */
  cpuUse: number;
  /** jobs not placed yet, by group */
  pending: Record<string, number>;
}

export interface UseStats {
  samples: number;
  mean: number | null;
  p5: number | null;
}

/** CPU use over the samples where some job waited. */
export function useWhileWaiting(samples: readonly UseSample[]): UseStats {
  const use = samples.filter((s) => Object.values(s.pending).some((n) => n > 0)).map((s) => s.cpuUse);
  return {
    samples: use.length,
    mean: use.length ? use.reduce((a, b) => a + b, 0) / use.length : null,
    p5: percentile(use, 5),
  };
}

export interface ShareWindow {
  /** The window's start, ms since `from` of shareWindows. */
  atMs: number;
  /** CPU-ms each group's runs accrued inside the window (nominal runs from their first start). */
  cpuMs: Record<string, number>;
  /** first group's CPU-ms over the second's */
  ratio: number;
}

export interface ShareResult {
  /** Both groups had jobs waiting: from the later first submit to the earlier last start. */
  saturatedFromMs: number;
  saturatedToMs: number;
  windows: ShareWindow[];
  minRatio: number | null;
  maxRatio: number | null;
  /** over the whole saturated interval */
  overallRatio: number | null;
}

/**
 * Every window of `windowMs`, `stepMs` apart, inside the interval in which both groups were
 * saturated (each still had jobs to place): what each group's runs accrued, and their ratio.
 */
export function shareWindows(
  jobs: readonly JobTiming[],
  groups: readonly [string, string],
  windowMs: number,
  stepMs: number,
): ShareResult {
  const of = (g: string) => jobs.filter((j) => j.group === g);
  const started = (js: JobTiming[]) => js.flatMap((j) => (j.runningMs === null ? [] : [j.runningMs]));
  const from = Math.max(...groups.map((g) => Math.min(...of(g).map((j) => j.createdMs))));
  const to = Math.min(...groups.map((g) => Math.max(...started(of(g)))));
  const accrued = (g: string, a: number, b: number) =>
    of(g).reduce(
      (sum, j) =>
        j.runningMs === null
          ? sum
          : sum +
            Math.max(0, Math.min(b, j.runningMs + j.durationMs) - Math.max(a, j.runningMs)) * (j.cpuMillis / 1000),
      0,
    );
  const windows: ShareWindow[] = [];
  for (let a = from; a + windowMs <= to; a += stepMs) {
    const cpuMs = Object.fromEntries(groups.map((g) => [g, accrued(g, a, a + windowMs)]));
    windows.push({ atMs: a - from, cpuMs, ratio: cpuMs[groups[0]]! / Math.max(1e-9, cpuMs[groups[1]]!) });
  }
  const ratios = windows.map((w) => w.ratio);
  const whole = to > from ? accrued(groups[0], from, to) / Math.max(1e-9, accrued(groups[1], from, to)) : null;
  return {
    saturatedFromMs: from,
    saturatedToMs: to,
    windows,
    minRatio: ratios.length ? Math.min(...ratios) : null,
    maxRatio: ratios.length ? Math.max(...ratios) : null,
    overallRatio: whole,
  };
}
