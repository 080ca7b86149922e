// The short failover campaign (the full one is `fencer chaos campaign`, a benchmark): a real
// cluster with jobs flowing, the leader killed and frozen (half the freezes inside a fenced
// transaction), nodes killed, frozen and cut off, PostgreSQL restarted and the leader's
// sessions terminated, and the overload faults: a node's reports refused while its heartbeats
// pass, its heartbeats refused while its reports pass, API pools exhausted, a late duplicate
// registration; workflows flow with the jobs; then the independent checker reads the history and
// the nodes' logs. A third of the lone jobs each go to two queues with hard limits; three CronJobs
// fire every few seconds throughout.
import { expect, it } from 'vitest';
import { runCampaign } from '../../src/chaos/campaign.js';
import { campaignReport } from '../../src/chaos/report.js';

it(
  'survives 5 leader kills and 5 leader freezes with a fault after each: nothing placed twice, run twice at once, lost, early, before its needs or past a queue limit; each cron occurrence once',
  async () => {
    const result = await runCampaign({
      kills: 5,
      freezes: 5,
      faults: true,
      // A fault after every failover: each of the nine kinds at least once in ten.
      faultEvery: 1,
      runtime: 'process',
      nodes: 5,
      jobsPerSecond: 8,
      pace: 'whole-cluster',
      seed: 7,
      log: () => {},
    });
    console.log(campaignReport(result, 'test/integration/campaign.test.ts'));
    expect(result.killMs).toHaveLength(5);
    expect(result.freezeMs).toHaveLength(5);
    expect(result.report.placedTwice).toEqual([]);
    expect(result.report.overlappingRuns).toEqual([]);
    expect(result.report.overcommitted).toEqual([]);
    expect(result.report.lost).toEqual([]);
    expect(result.report.early).toEqual([]);
    expect(result.report.unmetNeeds).toEqual([]);
    // Two queues with hard limits took a share of the jobs through the same failovers.
    expect(result.report.overQueueLimit).toEqual([]);
    // Three CronJobs fired every few seconds through the same failovers: each occurrence handled
    // once, none early, none missed, by their records.
    expect(result.report.cronHandledTwice).toEqual([]);
    expect(result.report.cronEarly).toEqual([]);
    expect(result.report.cronMissed).toEqual([]);
    expect(result.report.cronOverlap).toEqual([]);
    expect(result.report.cronStuck).toEqual([]);
    expect(result.report.counts.cronFired).toBeGreaterThan(20);
    // Workflows went through the same failovers, and every one closed.
    expect(result.workflowsAccepted).toBeGreaterThan(5);
    expect(result.workflows.Running).toBeUndefined();
    expect(result.wronglyDead).toEqual([]);
    expect(result.jobsAccepted).toBeGreaterThan(100);
    expect(Object.keys(result.faults)).toEqual(
      expect.arrayContaining([
        'partition-node',
        'degrade-reports',
        'kill-node',
        'exhaust-pool',
        'terminate-leader-backends',
        'fail-heartbeats',
        'freeze-node',
        'late-registration',
        'restart-postgres',
      ]),
    );
  },
  15 * 60_000,
);
