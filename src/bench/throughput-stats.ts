// The throughput benchmark's figures from plain data (no I/O, no clock): latency summaries, the
// completion curve, whether a steady rate was kept up, where the steady curve bends, ratios.
import { percentile } from '../report/results.js';

/** One job as its system recorded it, ms since the Unix epoch; null for what has not happened. */
export interface JobTiming {
  name: string;
  createdMs: number;
  startedMs: number | null;
  endedMs: number | null;
}

export interface LatencySummary {
  /** Jobs that started (the ones measured). */
  count: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export function summarize(values: readonly number[]): LatencySummary {
  return {
    count: values.length,
    p50Ms: percentile([...values], 50),
    p99Ms: percentile([...values], 99),
    maxMs: values.length ? Math.max(...values) : null,
  };
}

/** Creation → first start of every job that started. */
export function startLatency(jobs: readonly JobTiming[]): LatencySummary {
  return summarize(jobs.flatMap((j) => (j.startedMs === null ? [] : [j.startedMs - j.createdMs])));
}

/** The last end of the jobs, or null when one has not ended. */
export function lastEnd(jobs: readonly JobTiming[]): number | null {
  let last = -Infinity;
  for (const j of jobs) {
    if (j.endedMs === null) return null;
    last = Math.max(last, j.endedMs);
  }
  return jobs.length ? last : null;
}

/**
 * Jobs ended by each instant, as [seconds since `startMs`, count] at `points` even steps from 0 to
 * the last end: a cumulative curve, for a plot.
 */
export function completionCurve(endsMs: readonly number[], startMs: number, points = 200): Array<[number, number]> {
  const ends = endsMs.map((e) => e - startMs).sort((a, b) => a - b);
  const spanMs = Math.max(ends.at(-1) ?? 0, 1);
  const curve: Array<[number, number]> = [];
  let ended = 0;
  for (let i = 0; i <= points; i++) {
    const at = (spanMs * i) / points;
    while (ended < ends.length && ends[ended]! <= at) ended++;
    curve.push([at / 1000, ended]);
  }
  return curve;
}

/** Per second of `spanMs`, or null for no span. */
export function perSecond(count: number, spanMs: number): number | null {
  return spanMs > 0 ? (count * 1000) / spanMs : null;
}

/** a / b, or null when either is missing or b is 0. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a === null || a === undefined || b === null || b === undefined || b === 0 ? null : a / b;
}

/** A steady step held its rate if its jobs were accepted at no less than this share of the rate. */
export const HELD_SHARE = 0.95;
/** ... and kept up if, when its submissions ended, no more than this many seconds of arrivals had not started. */
export const BACKLOG_SECONDS = 1;

export interface StepFacts {
  rate: number;
  /** Jobs accepted in the step. */
  accepted: number;
  /** From the step's start to its last job accepted. */
  submitSeconds: number;
  /** Of the step's jobs, not started when its submissions ended. */
  notStartedAtEnd: number;
  latency: LatencySummary;
}

/** Whether the step's rate was submitted and run as it came: see HELD_SHARE and BACKLOG_SECONDS. */
export function keptUp(step: StepFacts): boolean {
  return held(step) && step.notStartedAtEnd <= step.rate * BACKLOG_SECONDS;
}

function held(step: StepFacts): boolean {
  return step.accepted >= HELD_SHARE * step.rate * step.submitSeconds;
}

/** A step's p99 this many times the lowest p99 of the rates below it is where the curve has bent ... */
export const BEND_FACTOR = 2;
/** ... if it is also this much more: a few ms more on a p99 of a few ms is noise, not a bend. */
export const BEND_MIN_MS = 100;

/**
 * The first rate, in the order run, at which the curve bends: the step did not keep up, or its
 * p99 is more than BEND_FACTOR times, and BEND_MIN_MS more than, the lowest p99 of the steps
 * before it (the lowest, not the first: one noisy step must not hide the bend). Null when none did.
 */
export function bend(steps: readonly StepFacts[]): { rate: number; why: string } | null {
  let best: StepFacts | undefined;
  for (const step of steps) {
    if (!keptUp(step)) {
      return {
        rate: step.rate,
        why: held(step)
          ? `${step.notStartedAtEnd} jobs had not started when its submissions ended (more than ${BACKLOG_SECONDS} s of arrivals)`
          : `its jobs were accepted at ${(step.accepted / step.submitSeconds).toFixed(0)}/s, under ${HELD_SHARE * 100} % of the rate`,
      };
    }
    const p99 = step.latency.p99Ms;
    const base = best?.latency.p99Ms ?? null;
    if (base !== null && p99 !== null && p99 > BEND_FACTOR * base && p99 > base + BEND_MIN_MS) {
      return {
        rate: step.rate,
        why: `p99 ${Math.round(p99)} ms, more than ${BEND_FACTOR} × the ${best!.rate}/s step's ${Math.round(base)} ms`,
      };
    }
    if (p99 !== null && (base === null || p99 < base)) best = step;
  }
  return null;
}

/** Splits items into chunks of `size` (the last one shorter). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The items starting at index `by` (mod their count), wrapping around: the replicas in turn. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** Parses "50,100,200": positive integers, increasing. Throws with what is wrong. */
export function parseRates(raw: string): number[] {
  const parts = raw.split(',').map((s) => s.trim());
  const rates = parts.map(Number);
  rates.forEach((r, i) => {
    if (!Number.isInteger(r) || r < 1)
      throw new Error(`"${parts[i]}" is not a positive integer rate (jobs per second)`);
    if (i > 0 && r <= rates[i - 1]!) throw new Error(`rates go up: ${r} after ${rates[i - 1]}`);
  });
  return rates;
}
