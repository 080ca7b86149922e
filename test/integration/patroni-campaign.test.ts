// A short campaign on HA PostgreSQL (docs/ha.md): jobs, workflows and CronJobs flowing, one leader
// kill, then the database's primary killed, frozen and cut off from etcd in turn (Patroni
// promotes the synchronous standby each time); then the checker over the history and the nodes'
// run logs. Skips, saying why, where the Debian packages are missing.
import { expect, it } from 'vitest';
import { runCampaign } from '../../src/chaos/campaign.js';
import { campaignClean, campaignReport } from '../../src/chaos/report.js';
import { haUnavailable } from '../../src/simulator/ha-postgres.js';

const unavailable = haUnavailable();
if (unavailable) console.warn(`the Patroni campaign is skipped: ${unavailable}`);

it.skipIf(unavailable !== null)(
  `survives the HA primary killed, frozen and cut off: nothing placed twice, run twice at once, lost or early (${unavailable ?? 'Patroni'})`,
  async () => {
    const result = await runCampaign({
      kills: 1,
      freezes: 0,
      postgresFaults: 3,
      faults: false,
      runtime: 'process',
      nodes: 3,
      jobsPerSecond: 3,
      pace: 'whole-cluster',
      seed: 11,
      log: () => {},
    });
    console.log(campaignReport(result, 'test/integration/patroni-campaign.test.ts'));
    expect(result.faults).toMatchObject({
      'kill-postgres-primary': 1,
      'freeze-postgres-primary': 1,
      'partition-postgres-primary': 1,
    });
    expect(result.postgresFailoverMs).toHaveLength(3);
    expect(result.report.placedTwice).toEqual([]);
    expect(result.report.overlappingRuns).toEqual([]);
    expect(result.report.lost).toEqual([]);
    expect(result.report.early).toEqual([]);
    expect(result.wronglyDead).toEqual([]);
    expect(campaignClean(result)).toBe(true);
    expect(result.jobsAccepted).toBeGreaterThan(20);
  },
  15 * 60_000,
);
