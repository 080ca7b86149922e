// The three loads of the throughput benchmark, written once against JobSystem so that fencer and
// graphile-worker get exactly the same:
//   burst  — N jobs in batches, a few requests in flight, then wait until every job has ended;
//   steady — a fixed rate held for a while, stepped up, each step drained before the next;
//   single — one job at a time on an idle system.
// Every job is named from its mode (burst-17, steady-r400-3, single-5), so each system can report
// the jobs of one mode by that prefix.
import { delay } from '../lifecycle.js';
import {
  chunks,
  keptUp,
  startLatency,
  summarize,
  type JobTiming,
  type LatencySummary,
  type StepFacts,
} from './throughput-stats.js';

/** Every job of the benchmark: as small as fencer allows, and next to no run time. */
export const JOB_SHAPE = { cpu: '10m', memory: '1Mi', durationMs: 1 } as const;

export interface SubmitReceipt {
  /** Times the jobs were sent again: after a 429's Retry-After, or a round no replica took them. */
  resends: number;
}

/** What the loads need of a job system. */
export interface JobSystem {
  readonly label: string;
  /** Enqueues the named jobs, all or none; `turn` says where to send them first, for a system of several servers. */
  submit(names: readonly string[], turn: number): Promise<SubmitReceipt>;
  /** Jobs submitted and not ended. */
  unfinished(): Promise<number>;
  /** Jobs named `prefix`… that have not started. */
  notStarted(prefix: string): Promise<number>;
  /** Jobs named `prefix`…, as the system recorded them. */
  timings(prefix: string): Promise<JobTiming[]>;
}

export interface WaitOptions {
  signal?: AbortSignal;
  log: (line: string) => void;
}

const POLL_MS = 500;
const PROGRESS_MS = 10_000;
/** A wait gives up when no job ended for this long: the report then says how many never did. */
const STALL_MS = 120_000;

/** Waits until no job is unfinished, or until none ended for STALL_MS; returns how many are left. */
export async function waitUntilEnded(system: JobSystem, opts: WaitOptions): Promise<number> {
  let left = Infinity;
  let movedAt = Date.now();
  let loggedAt = Date.now();
  for (;;) {
    opts.signal?.throwIfAborted();
    const now = await system.unfinished();
    if (now === 0) return 0;
    if (now < left) movedAt = Date.now();
    left = now;
    if (Date.now() - movedAt > STALL_MS) {
      opts.log(
        `${system.label}: ${left} jobs have not ended and none ended for ${STALL_MS / 1000} s: giving up the wait`,
      );
      return left;
    }
    if (Date.now() - loggedAt >= PROGRESS_MS) {
      loggedAt = Date.now();
      opts.log(`${system.label}: ${left} jobs not ended yet`);
    }
    await delay(POLL_MS, opts.signal);
  }
}

export const WARMUP_PREFIX = 'warmup-';
export const BURST_PREFIX = 'burst-';
export const SINGLE_PREFIX = 'single-';
export const STEADY_PREFIX = 'steady-';
export const stepPrefix = (rate: number): string => `${STEADY_PREFIX}r${rate}-`;

export interface BurstOptions extends WaitOptions {
  jobs: number;
  batch: number;
  inFlight: number;
}

export interface BurstRun {
  jobs: number;
  requests: number;
  resends: number;
  /** Date.now() when the first batch went out, and when the last one was accepted. */
  firstSentMs: number;
  lastAcceptedMs: number;
  /** Jobs not ended when the wait gave up (0: all ended). */
  left: number;
  timings: JobTiming[];
}

/** N jobs in batches of `batch`, `inFlight` requests at a time, each batch sent first where its turn says. */
export async function burst(system: JobSystem, opts: BurstOptions): Promise<BurstRun> {
  const batches = chunks(
    Array.from({ length: opts.jobs }, (_, i) => `${BURST_PREFIX}${i + 1}`),
    opts.batch,
  );
  let next = 0;
  let resends = 0;
  let accepted = 0;
  let loggedAt = Date.now();
  const firstSentMs = Date.now();
  let lastAcceptedMs = firstSentMs;
  const sender = async () => {
    for (let i = next++; i < batches.length; i = next++) {
      opts.signal?.throwIfAborted();
      resends += (await system.submit(batches[i]!, i)).resends;
      accepted += batches[i]!.length;
      lastAcceptedMs = Date.now();
      if (lastAcceptedMs - loggedAt >= PROGRESS_MS) {
        loggedAt = lastAcceptedMs;
        opts.log(`${system.label}: ${accepted} of ${opts.jobs} jobs accepted`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.inFlight, batches.length) }, sender));
  opts.log(
    `${system.label}: ${opts.jobs} jobs accepted in ${((lastAcceptedMs - firstSentMs) / 1000).toFixed(1)} s; waiting for them to end`,
  );
  const left = await waitUntilEnded(system, opts);
  return {
    jobs: opts.jobs,
    requests: batches.length,
    resends,
    firstSentMs,
    lastAcceptedMs,
    left,
    timings: await system.timings(BURST_PREFIX),
  };
}

export interface SteadyOptions extends WaitOptions {
  rates: readonly number[];
  stepSeconds: number;
}

export interface SteadyStep extends StepFacts {
  requests: number;
  /** Ticks that sent nothing because MAX_STEADY_IN_FLIGHT requests were still unanswered. */
  skippedTicks: number;
  keptUp: boolean;
  /** Jobs of the step not ended when the drain gave up (0: all ended). */
  left: number;
}

/** Jobs due are sent every TICK_MS, as one request. */
const TICK_MS = 100;
/** A tick sends nothing while this many requests are unanswered: what is due goes with the next. */
const MAX_STEADY_IN_FLIGHT = 8;

/**
 * Each rate held for stepSeconds, its jobs sent every TICK_MS (what fell due since the last
 * tick, in one request, to the next server in turn); then its jobs are waited for before the
 * next step. Stops after the first step that did not keep up: higher rates only pile on.
 */
export async function steady(system: JobSystem, opts: SteadyOptions): Promise<SteadyStep[]> {
  const steps: SteadyStep[] = [];
  let turn = 0;
  for (const rate of opts.rates) {
    const prefix = stepPrefix(rate);
    const total = rate * opts.stepSeconds;
    opts.log(`${system.label}: ${rate} jobs/s for ${opts.stepSeconds} s`);
    const inFlight = new Set<Promise<void>>();
    const failures: unknown[] = [];
    let sent = 0;
    let accepted = 0;
    let requests = 0;
    let skippedTicks = 0;
    let lastAcceptedMs = Date.now();
    const start = lastAcceptedMs;
    for (let tick = 1; sent < total; tick++) {
      await delay(start + tick * TICK_MS - Date.now(), opts.signal);
      opts.signal?.throwIfAborted();
      if (inFlight.size >= MAX_STEADY_IN_FLIGHT) {
        skippedTicks++;
        continue;
      }
      const due = Math.min(total, Math.floor((rate * (Date.now() - start)) / 1000));
      if (due <= sent) continue;
      const names = Array.from({ length: due - sent }, (_, i) => `${prefix}${sent + i + 1}`);
      sent = due;
      requests++;
      const sending = system.submit(names, turn++).then(
        () => {
          accepted += names.length;
          lastAcceptedMs = Date.now();
        },
        (err: unknown) => void failures.push(err),
      );
      inFlight.add(sending);
      void sending.finally(() => inFlight.delete(sending));
    }
    await Promise.all(inFlight);
    if (failures.length > 0) throw failures[0];
    const submitSeconds = (lastAcceptedMs - start) / 1000;
    const notStartedAtEnd = await system.notStarted(prefix);
    const left = await waitUntilEnded(system, opts);
    const facts: StepFacts = {
      rate,
      accepted,
      submitSeconds,
      notStartedAtEnd,
      latency: startLatency(await system.timings(prefix)),
    };
    const step: SteadyStep = { ...facts, requests, skippedTicks, keptUp: keptUp(facts), left };
    steps.push(step);
    opts.log(
      `${system.label}: ${rate}/s: ${accepted} accepted in ${submitSeconds.toFixed(1)} s, ${notStartedAtEnd} not started at its end, ` +
        `submit → start p50 ${step.latency.p50Ms?.toFixed(0)} ms p99 ${step.latency.p99Ms?.toFixed(0)} ms: ${step.keptUp ? 'kept up' : 'did NOT keep up'}`,
    );
    if (!step.keptUp) break;
  }
  return steps;
}

/** Jobs a system takes, one at a time, before its first load: a fresh process's first requests pay for its warm-up. */
export const WARMUP_JOBS = 5;

/** WARMUP_JOBS jobs one at a time, then until they have ended. */
export async function warmUp(system: JobSystem, opts: WaitOptions): Promise<void> {
  for (let i = 1; i <= WARMUP_JOBS; i++) await system.submit([`${WARMUP_PREFIX}${i}`], i);
  await waitUntilEnded(system, opts);
}

export interface SinglesOptions extends WaitOptions {
  count: number;
  gapMs: number;
}

export interface SinglesRun {
  count: number;
  gapMs: number;
  /** Each submission, sent → accepted, by the client's clock. */
  answers: LatencySummary;
  left: number;
  timings: JobTiming[];
}

/** One job at a time: each sent gapMs after the last one was accepted. */
export async function singles(system: JobSystem, opts: SinglesOptions): Promise<SinglesRun> {
  const answers: number[] = [];
  for (let i = 1; i <= opts.count; i++) {
    opts.signal?.throwIfAborted();
    const sentMs = Date.now();
    await system.submit([`${SINGLE_PREFIX}${i}`], i);
    answers.push(Date.now() - sentMs);
    await delay(opts.gapMs, opts.signal);
  }
  const left = await waitUntilEnded(system, opts);
  return {
    count: opts.count,
    gapMs: opts.gapMs,
    answers: summarize(answers),
    left,
    timings: await system.timings(SINGLE_PREFIX),
  };
}
