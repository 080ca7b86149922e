// The fairness benchmark, small (a flood of 200 short jobs on 3 nodes against two trickles, fair
// share on and off; two weighted queues for a few seconds) so that it keeps working: every job
// finishes once, the checker is clean, the report names every tenant and queue. The figures
// themselves are never asserted: this machine is shared and noisy.
import { describe, expect, it } from 'vitest';
import { runFairnessBench, TENANTS, WEIGHTS } from '../../src/bench/fairness.js';
import { allClean, fairnessPlots, fairnessReport } from '../../src/bench/fairness-report.js';
import { freshDatabase } from '../helpers/database.js';

describe('bench fairness, small', () => {
  it('runs a flood against a trickle with fair share on and off, and weighted queues, to the end', async () => {
    const t = await freshDatabase('fairness', { migrate: false });
    try {
      const result = await runFairnessBench({
        cases: ['flood', 'weights'],
        flood: 200,
        trickleMs: 500,
        nodes: 3,
        nodeCpu: 4,
        durationMs: 300,
        spread: 0.5,
        seed: 1,
        weightsSeconds: 4,
        windowSeconds: 2,
        replicas: 3,
        runtime: 'process',
        nodesPerProcess: 1,
        databaseUrl: t.url,
        log: () => {},
      });
      for (const run of [result.on!, result.off!]) {
        expect(run.waits[TENANTS.flood]!.jobs).toBe(200);
        expect(run.phases).toEqual({ Succeeded: 200 + run.trickleSubmitted });
        expect(run.trickleRefused).toBe(0);
        for (const tenant of TENANTS.trickle) expect(run.waits[tenant]!.p99Ms).not.toBeNull();
        expect(run.finish.finishMs).toBeGreaterThan(0);
        expect(run.finish.lowerBoundWithOthersMs).toBeGreaterThanOrEqual(run.finish.lowerBoundMs);
        expect(run.use.mean).toBeGreaterThan(0);
      }
      expect(result.on!.fairShare).toBe(true);
      expect(result.off!.fairShare).toBe(false);
      const weights = result.weights!;
      expect(Object.values(weights.phases)).toEqual([Object.values(weights.jobs).reduce((a, b) => a + b, 0)]);
      expect(weights.shares.windows.length).toBeGreaterThan(0);
      expect(allClean(result)).toBe(true);
      for (const run of [result.on!, result.off!, weights]) {
        expect(run.verdict).toMatchObject({
          ok: true,
          placedTwice: 0,
          overlappingRuns: 0,
          overcommitted: 0,
          lost: 0,
          early: 0,
          overQueueLimit: 0,
        });
      }
      const plots = fairnessPlots(result);
      expect(plots.waits).toMatch(/^<svg[\s\S]*<path d="M[\s\S]*<\/svg>\n$/);
      expect(plots.shares).toMatch(/^<svg[\s\S]*<path d="M[\s\S]*<\/svg>\n$/);
      const report = fairnessReport(result, 'fencer bench fairness …', new Date(), { waits: 'w.svg', shares: 's.svg' });
      for (const name of [...TENANTS.trickle, TENANTS.flood, ...WEIGHTS.queues.map((q) => q.name)])
        expect(report).toContain(name);
      expect(report).toMatch(/\| tenant-b wait p50 \/ p99 \/ max \| \d+ ms \/ \d+ ms \/ \d+ ms \|/);
      expect(report).toMatch(
        /\| ratio weight-3 : weight-1, min \/ max over the windows \| \d+\.\d{3} \/ \d+\.\d{3} \|/,
      );
      expect(report).toContain('0 / 0 / 0 / 0 / 0 / 0');
    } finally {
      await t.close();
    }
  });
});
