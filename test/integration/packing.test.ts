// The packing benchmark, small (500 jobs on 10 process nodes, durations / 100) so that it keeps
// working: every job finishes once, the figures it reports are there and make sense. The figures
// themselves are never asserted: this machine is shared and noisy. And the placement benchmarks:
// the algorithm at a small scale, the commit path on simulated nodes, no job placed twice.
import { describe, expect, it } from 'vitest';
import { runPackingBench } from '../../src/bench/packing.js';
import { packingPlot, packingReport } from '../../src/bench/packing-report.js';
import { runCommitRateBench } from '../../src/bench/commit-rate.js';
import { runScaleCase } from '../../src/bench/placement-scale.js';
import { DEFAULT_POLICY, policyName } from '../../src/placement/policies.js';
import { freshDatabase } from '../helpers/database.js';

describe('bench packing, small', () => {
  it('runs 500 jobs on 10 nodes (5 per agent process) to the end and reports use, time and rounds', async () => {
    const t = await freshDatabase('packing', { migrate: false });
    try {
      const result = await runPackingBench({
        jobs: 500,
        nodes: 10,
        nodesPerProcess: 5,
        replicas: 3,
        seed: 1,
        timeScale: 100,
        runtime: 'process',
        policy: DEFAULT_POLICY,
        compare: [DEFAULT_POLICY, { ordering: 'arrival', fit: 'best-fit' }],
        progress: false,
        databaseUrl: t.url,
        log: () => {},
      });
      expect(result.phases).toEqual({ Succeeded: 500 });
      expect(result.verdict).toMatchObject({
        ok: true,
        placedTwice: 0,
        overlappingRuns: 0,
        overcommitted: 0,
        lost: 0,
        early: 0,
      });
      expect(result.verdict.runs).toBeGreaterThanOrEqual(500); // every job ran, by the nodes' own logs
      expect(result.finishMs).toBeGreaterThan(result.lowerBoundMs * 0.99);
      expect(result.cpuUseWhileWaiting).toBeGreaterThan(0);
      expect(result.cpuUseWhileWaiting).toBeLessThanOrEqual(1);
      expect(result.memoryUseWhileWaiting).toBeLessThanOrEqual(1);
      expect(result.decide.count).toBeGreaterThan(0);
      expect(result.round.p50Ms).not.toBeNull();
      // Every job ran once; its node held it at least as long as it ran.
      expect(result.overhead.assignments).toBe(500);
      expect(result.overhead.beyondRunP50Ms).toBeGreaterThanOrEqual(0);
      expect(result.overhead.shareOfHeld).toBeGreaterThan(0);
      expect(result.overhead.shareOfHeld).toBeLessThan(1);
      expect(result.simulations).toHaveLength(2);
      const report = packingReport(result, 'fencer bench packing …', new Date(), 'plot.svg');
      expect(report).toContain('10 nodes of 16 CPU / 64 GiB (5 per agent process)');
      expect(report).toMatch(/\| CPU use while jobs waited \(allocated \/ capacity\) \| \d+\.\d %/);
      expect(report).toMatch(/\| time to finish \/ lower bound \| \d+\.\d{3} \|/);
      expect(report).toContain(policyName(DEFAULT_POLICY));
      expect(report).toMatch(
        /\| share of allocated node-time beyond the runs \(the simulation has none\) \| \d+\.\d % \|/,
      );
      expect(packingPlot(result)).toMatch(/^<svg[\s\S]*<path d="M[\s\S]*<\/svg>\n$/);
    } finally {
      await t.close();
    }
  });
});

describe('bench placement, small', () => {
  it('times steady rounds of the algorithm', () => {
    const result = runScaleCase({ pending: 2000, nodes: 50 }, DEFAULT_POLICY, 5);
    expect(result.firstRoundPlaced).toBeGreaterThan(0);
    expect(result.roundMs).toHaveLength(5);
  });

  it('commits placements for many simulated nodes, none twice, none past a node', async () => {
    const t = await freshDatabase('commit_rate', { migrate: false });
    try {
      const result = await runCommitRateBench({ nodes: 200, jobs: 1000, seed: 2, databaseUrl: t.url, log: () => {} });
      expect(result.placed).toBe(1000);
      expect(result.placedTwice).toBe(0);
      const overfull = await t.db.query(
        'SELECT name FROM nodes WHERE allocated_cpu_millis > cpu_millis OR allocated_memory_bytes > memory_bytes',
      );
      expect(overfull.rows).toEqual([]);
      const perNode = await t.db.query<{ n: number }>(
        "SELECT count(DISTINCT node)::int AS n FROM assignments WHERE state = 'Assigned'",
      );
      expect(perNode.rows[0]!.n).toBeGreaterThan(1);
    } finally {
      await t.close();
    }
  });
});
