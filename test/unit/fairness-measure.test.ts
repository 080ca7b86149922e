// The fairness benchmark's figures from fixed job timings: waits, the flood's lower bounds, CPU
// use while jobs wait, and the weighted queues' ratio per window.
import { describe, expect, it } from 'vitest';
import {
  floodFinish,
  shareWindows,
  useWhileWaiting,
  waitStats,
  type JobTiming,
  type UseSample,
} from '../../src/bench/fairness-measure.js';

const job = (
  group: string,
  createdMs: number,
  runningMs: number | null,
  durationMs = 1000,
  cpuMillis = 1000,
): JobTiming => ({
  group,
  createdMs,
  placedMs: runningMs === null ? null : runningMs - 10,
  runningMs,
  finishedMs: runningMs === null ? null : runningMs + durationMs,
  cpuMillis,
  durationMs,
});

describe('waitStats', () => {
  it('takes submit → running over the jobs that ran, nearest-rank percentiles', () => {
    const jobs = [
      ...Array.from({ length: 99 }, (_, i) => job('b', i * 200, i * 200 + 50)),
      job('b', 20_000, 21_000),
      job('b', 20_100, null),
    ];
    expect(waitStats(jobs)).toEqual({
      jobs: 101,
      p50Ms: 50,
      p99Ms: 50,
      maxMs: 1000,
      meanMs: (99 * 50 + 1000) / 100,
      toPlacedP50Ms: 40,
      toPlacedP99Ms: 40,
      placedToRunningP50Ms: 10,
      placedToRunningP99Ms: 10,
      sentToRunningP99Ms: null,
      answeredToPlacedP50Ms: null,
      answeredToPlacedP99Ms: null,
    });
  });

  it("times the client's part when it knows it", () => {
    const timed = { ...job('b', 1000, 1100), sentMs: 990, answeredMs: 1020 };
    expect(waitStats([timed])).toMatchObject({
      p99Ms: 100,
      sentToRunningP99Ms: 110,
      answeredToPlacedP50Ms: 70,
      answeredToPlacedP99Ms: 70,
    });
  });

  it('has no figures for no run', () => {
    expect(waitStats([job('b', 0, null)])).toMatchObject({ jobs: 1, p50Ms: null, maxMs: null, meanMs: null });
  });
});

describe('floodFinish', () => {
  it('bounds the flood by its work over the cluster, and with what else ran inside its window', () => {
    // 8 jobs of 1 CPU × 1 s on 2 CPU: 4 s at best; it took 5 s (created at 0, last finish at 5 s).
    const flood = Array.from({ length: 8 }, (_, i) => job('a', 0, Math.floor(i / 2) * 1000 + (i === 7 ? 1000 : 0)));
    // One trickle job ran 4.5–5.5 s: half of it inside the window; one never ran.
    const others = [job('b', 4000, 4500), job('c', 4000, null)];
    const f = floodFinish(flood, others, 2000);
    expect(f.finishMs).toBe(5000);
    expect(f.lowerBoundMs).toBe(4000);
    expect(f.othersWorkMs).toBe(500);
    expect(f.lowerBoundWithOthersMs).toBe(4250);
  });

  it('is never below the longest job', () => {
    expect(floodFinish([job('a', 0, 0, 10_000)], [], 100_000).lowerBoundMs).toBe(10_000);
  });
});

describe('useWhileWaiting', () => {
  it('averages CPU use over the samples in which something was pending', () => {
    const samples: UseSample[] = [
      { atMs: 0, cpuUse: 0.5, pending: { 'a/default': 10 } },
      { atMs: 500, cpuUse: 1, pending: { 'a/default': 3, 'b/default': 0 } },
      { atMs: 1000, cpuUse: 0.2, pending: {} },
      { atMs: 1500, cpuUse: 0.1, pending: { 'a/default': 0 } },
    ];
    expect(useWhileWaiting(samples)).toEqual({ samples: 2, mean: 0.75, p5: 0.5 });
  });
});

describe('shareWindows', () => {
  it('gives each window the CPU-seconds each queue accrued, inside the interval both were saturated', () => {
    // On 4 slots, 1 s jobs: three of heavy and one of light start every second for 20 s; heavy
    // has 6 more after light ran out (started at 20 s and 21 s).
    const jobs: JobTiming[] = [];
    for (let t = 0; t < 20; t++) {
      for (let k = 0; k < 3; k++) jobs.push(job('heavy', 0, t * 1000));
      jobs.push(job('light', 0, t * 1000));
    }
    for (let k = 0; k < 6; k++) jobs.push(job('heavy', 0, 20_000 + Math.floor(k / 3) * 1000));
    const s = shareWindows(jobs, ['heavy', 'light'], 10_000, 1000);
    expect(s.saturatedFromMs).toBe(0);
    expect(s.saturatedToMs).toBe(19_000); // light's last start
    expect(s.windows.map((w) => w.atMs)).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000]);
    expect(s.windows[0]!.cpuMs).toEqual({ heavy: 30_000, light: 10_000 });
    expect(s.minRatio).toBe(3);
    expect(s.maxRatio).toBe(3);
    expect(s.overallRatio).toBe(3);
  });

  it('has no window when the saturated interval is shorter than one', () => {
    const s = shareWindows([job('heavy', 0, 0), job('light', 0, 1000)], ['heavy', 'light'], 30_000, 1000);
    expect(s.windows).toEqual([]);
    expect(s.minRatio).toBeNull();
  });
});
