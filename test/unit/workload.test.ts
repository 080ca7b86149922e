import { describe, expect, it } from 'vitest';
import {
  generateWorkload,
  lowerBoundMs,
  NODE_CPU_MILLIS,
  NODE_MEMORY_BYTES,
  type WorkloadJob,
} from '../../src/bench/workload.js';
import { simulatePacking } from '../../src/bench/packing-simulation.js';

describe('the packing workload', () => {
  it('is the same for the same seed, and another for another seed', () => {
    const a = generateWorkload({ jobs: 200, seed: 5, timeScale: 10 });
    expect(generateWorkload({ jobs: 200, seed: 5, timeScale: 10 })).toEqual(a);
    expect(generateWorkload({ jobs: 200, seed: 6, timeScale: 10 })).not.toEqual(a);
  });

  it("mixes the four kinds, asks for about the nodes' own CPU-to-memory ratio, and scales durations", () => {
    const jobs = generateWorkload({ jobs: 5000, seed: 1, timeScale: 10 });
    const share = (kind: string) => jobs.filter((j) => j.kind === kind).length / jobs.length;
    expect(share('small')).toBeCloseTo(0.45, 1);
    expect(share('cpu-heavy')).toBeCloseTo(0.2, 1);
    expect(share('memory-heavy')).toBeCloseTo(0.2, 1);
    expect(share('large')).toBeCloseTo(0.15, 1);
    const cpu = jobs.reduce((s, j) => s + j.cpuMillis, 0);
    const memory = jobs.reduce((s, j) => s + j.memoryBytes, 0);
    expect(memory / NODE_MEMORY_BYTES / (cpu / NODE_CPU_MILLIS)).toBeGreaterThan(0.9);
    expect(memory / NODE_MEMORY_BYTES / (cpu / NODE_CPU_MILLIS)).toBeLessThan(1.1);
    for (const j of jobs) {
      expect(j.durationMs).toBeGreaterThanOrEqual(3000);
      expect(j.durationMs).toBeLessThanOrEqual(60_000);
      expect(j.memoryBytes % (64 * 1024 ** 2)).toBe(0);
    }
  });

  it('has a lower bound of the larger of CPU work, memory work and the longest job', () => {
    const job = (cpuMillis: number, memoryBytes: number, durationMs: number): WorkloadJob => ({
      name: 'j',
      kind: 'small',
      cpuMillis,
      memoryBytes,
      durationMs,
    });
    // Two nodes: 32 CPU, 128 GiB.
    expect(lowerBoundMs([job(16_000, 1, 10_000), job(16_000, 1, 10_000), job(32_000, 1, 10_000)], 2)).toBe(20_000);
    expect(lowerBoundMs([job(1, NODE_MEMORY_BYTES * 2, 30_000)], 2)).toBe(30_000);
    expect(lowerBoundMs([job(1, 1, 5000), job(1, 1, 7000)], 2)).toBe(7000);
  });
});

describe('the packing simulation', () => {
  it('finishes every job, never before the lower bound, with use between 0 and 1', () => {
    const jobs = generateWorkload({ jobs: 300, seed: 3, timeScale: 10 });
    for (const ordering of ['arrival', 'most-work-first', 'most-work-balanced'] as const) {
      const result = simulatePacking(jobs, 4, { ordering, fit: 'best-fit' });
      expect(result.finishMs).toBeGreaterThanOrEqual(result.lowerBoundMs);
      expect(result.cpuUseWhileWaiting).toBeGreaterThan(0.5);
      expect(result.cpuUseWhileWaiting).toBeLessThanOrEqual(1);
      expect(result.memoryUseWhileWaiting).toBeLessThanOrEqual(1);
      expect(Math.max(...result.samples.map((s) => s.cpuUse))).toBeLessThanOrEqual(1);
      expect(result.samples.at(-1)!.pending).toBe(0);
    }
  });
});
