// The throughput benchmark's pure parts: /proc parsing, its figures from fixed timings, the steady
// curve's bend, and its three loads against an in-memory job system.
import { describe, expect, it } from 'vitest';
import { parseProcStat, statusBytes } from '../../src/bench/process-usage.js';
import {
  bend,
  chunks,
  completionCurve,
  keptUp,
  lastEnd,
  parseRates,
  ratio,
  rotate,
  startLatency,
  summarize,
  type JobTiming,
  type StepFacts,
} from '../../src/bench/throughput-stats.js';
import { burst, singles, steady, warmUp, type JobSystem } from '../../src/bench/throughput-modes.js';

describe('parseProcStat', () => {
  it('counts fields from the last parenthesis, whatever the command name holds', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
    const line = '4242 (node (replica) 1) S 4200 4242 4242 0 -1 4194560 1000 0 0 0 250 50 700 100 20 0 11 0 12345 0 0';
    expect(parseProcStat(line)).toEqual({
      comm: 'node (replica) 1',
      ppid: 4200,
      ownSeconds: 3,
      reapedChildrenSeconds: 8,
    });
  });

  it('refuses what is not a stat line', () => {
    expect(() => parseProcStat('nothing here')).toThrow(/not a \/proc\/PID\/stat line/);
  });
});

describe('statusBytes', () => {
  const status = 'Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  153600 kB\nThreads:\t11\n';
  it('reads kB lines as bytes', () => {
    expect(statusBytes(status, 'VmRSS')).toBe(153600 * 1024);
    expect(statusBytes(status, 'VmHWM')).toBe(204800 * 1024);
  });
  it('is null for a line that is not there (a kernel thread has no VmRSS)', () => {
    expect(statusBytes('Name:\tkthreadd\n', 'VmRSS')).toBeNull();
  });
});

const job = (
  name: string,
  createdMs: number,
  startedMs: number | null,
  endedMs: number | null = startedMs === null ? null : startedMs + 1,
): JobTiming => ({ name, createdMs, startedMs, endedMs });

describe('figures from timings', () => {
  it('takes creation → start over the jobs that started, nearest-rank percentiles', () => {
    const jobs = [
      ...Array.from({ length: 99 }, (_, i) => job(`a-${i}`, 1000, 1010)),
      job('a-99', 1000, 1500),
      job('a-100', 1000, null),
    ];
    expect(startLatency(jobs)).toEqual({ count: 100, p50Ms: 10, p99Ms: 10, maxMs: 500 });
    expect(summarize([])).toEqual({ count: 0, p50Ms: null, p99Ms: null, maxMs: null });
  });

  it('has a last end only when every job ended', () => {
    expect(lastEnd([job('a', 0, 5, 9), job('b', 0, 20, 30)])).toBe(30);
    expect(lastEnd([job('a', 0, 5, 9), job('b', 0, null)])).toBeNull();
    expect(lastEnd([])).toBeNull();
  });

  it('draws the completion curve as jobs ended by each instant', () => {
    expect(completionCurve([1000, 2000, 3000, 5000], 1000, 4)).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 3],
      [4, 4],
    ]);
  });

  it('gives no ratio without both figures', () => {
    expect(ratio(10, 4)).toBe(2.5);
    expect(ratio(10, 0)).toBeNull();
    expect(ratio(null, 4)).toBeNull();
  });
});

describe('the steady curve', () => {
  const step = (rate: number, p99Ms: number, over: Partial<StepFacts> = {}): StepFacts => ({
    rate,
    accepted: rate * 60,
    submitSeconds: 60,
    notStartedAtEnd: 0,
    latency: { count: rate * 60, p50Ms: p99Ms / 2, p99Ms, maxMs: p99Ms },
    ...over,
  });

  it('keeps up while the rate is held and the backlog stays under a second of arrivals', () => {
    expect(keptUp(step(100, 50))).toBe(true);
    expect(keptUp(step(100, 50, { notStartedAtEnd: 100 }))).toBe(true);
    expect(keptUp(step(100, 50, { notStartedAtEnd: 101 }))).toBe(false);
    expect(keptUp(step(100, 50, { submitSeconds: 64 }))).toBe(false);
  });

  const table: Array<{ name: string; steps: StepFacts[]; bendsAt: number | null; why?: RegExp }> = [
    { name: 'flat', steps: [step(50, 40), step(100, 45), step(200, 70)], bendsAt: null },
    {
      name: 'p99 more than doubles',
      steps: [step(50, 40), step(100, 60), step(200, 141)],
      bendsAt: 200,
      why: /p99 141 ms, more than 2 × the 50\/s step's 40 ms/,
    },
    { name: 'doubling by a few ms is noise', steps: [step(50, 10), step(100, 28)], bendsAt: null },
    {
      name: 'against the lowest p99 below, not a noisy first step',
      steps: [step(25, 1100), step(50, 280), step(100, 650)],
      bendsAt: 100,
      why: /p99 650 ms, more than 2 × the 50\/s step's 280 ms/,
    },
    {
      name: 'a backlog',
      steps: [step(50, 40), step(100, 41, { notStartedAtEnd: 500 })],
      bendsAt: 100,
      why: /500 jobs had not started/,
    },
    {
      name: 'submissions fell behind',
      steps: [step(50, 40), step(100, 41, { submitSeconds: 80 })],
      bendsAt: 100,
      why: /accepted at 75\/s/,
    },
  ];
  it.each(table)('bends where it should: $name', ({ steps, bendsAt, why }) => {
    const found = bend(steps);
    expect(found?.rate ?? null).toBe(bendsAt);
    if (why) expect(found!.why).toMatch(why);
  });
});

describe('options and helpers', () => {
  it('parses rising rates and says what is wrong', () => {
    expect(parseRates('50, 100,200')).toEqual([50, 100, 200]);
    expect(() => parseRates('50,abc')).toThrow('"abc" is not a positive integer rate');
    expect(() => parseRates('100,50')).toThrow('rates go up: 50 after 100');
  });

  it('chunks and rotates', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(rotate(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a']);
  });
});

/** A job system in memory: a job starts 2 ms after it is submitted and ends 1 ms later. */
class FakeSystem implements JobSystem {
  readonly label = 'fake';
  readonly requests: Array<{ names: readonly string[]; turn: number }> = [];
  private readonly jobs = new Map<string, JobTiming>();

  async submit(names: readonly string[], turn: number) {
    this.requests.push({ names, turn });
    const now = Date.now();
    for (const name of names) this.jobs.set(name, { name, createdMs: now, startedMs: now + 2, endedMs: now + 3 });
    return { resends: 0 };
  }

  async unfinished() {
    const now = Date.now();
    return [...this.jobs.values()].filter((j) => j.endedMs! > now).length;
  }

  async notStarted(prefix: string) {
    return [...this.jobs.values()].filter((j) => j.name.startsWith(prefix) && j.startedMs! > Date.now()).length;
  }

  async timings(prefix: string) {
    return [...this.jobs.values()].filter((j) => j.name.startsWith(prefix));
  }
}

const quiet = { log: () => {} };

describe('the loads', () => {
  it('bursts in batches, each to the next server in turn, and waits for every job', async () => {
    const system = new FakeSystem();
    const run = await burst(system, { ...quiet, jobs: 25, batch: 10, inFlight: 2 });
    expect(system.requests.map((r) => [r.names.length, r.turn])).toEqual([
      [10, 0],
      [10, 1],
      [5, 2],
    ]);
    expect(run).toMatchObject({ jobs: 25, requests: 3, resends: 0, left: 0 });
    expect(run.timings.map((t) => t.name).sort()).toEqual(
      Array.from({ length: 25 }, (_, i) => `burst-${i + 1}`).sort(),
    );
  });

  it('sends singles one at a time and warms up apart from them', async () => {
    const system = new FakeSystem();
    await warmUp(system, quiet);
    const run = await singles(system, { ...quiet, count: 3, gapMs: 1 });
    expect(system.requests.map((r) => r.names)).toEqual([
      ['warmup-1'],
      ['warmup-2'],
      ['warmup-3'],
      ['warmup-4'],
      ['warmup-5'],
      ['single-1'],
      ['single-2'],
      ['single-3'],
    ]);
    expect(run.timings.map((t) => t.name)).toEqual(['single-1', 'single-2', 'single-3']);
    expect(run.answers.count).toBe(3);
  });

  it('holds a rate for its step and names its jobs by it', async () => {
    const system = new FakeSystem();
    const steps = await steady(system, { ...quiet, rates: [20], stepSeconds: 1 });
    expect(steps).toHaveLength(1);
    // Whether it kept up depends on this machine's timers: keptUp has its own table above.
    expect(steps[0]).toMatchObject({ rate: 20, accepted: 20, left: 0 });
    expect(system.requests.flatMap((r) => r.names)).toEqual(
      Array.from({ length: 20 }, (_, i) => `steady-r20-${i + 1}`),
    );
  });
});
