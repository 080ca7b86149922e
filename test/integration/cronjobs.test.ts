// CronJobs on a cluster of real processes (3 replicas, 2 agents) through a leader kill and a
// leader freeze: every occurrence is handled once (fired or skipped with a reason), none early,
// none missed, by the occurrence records; the nodes' logs show no run twice and, under Forbid,
// never two of its runs at once. An edit mid-flight: no occurrence of the old schedule after it.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, placementsOverRate, runFindings } from '../helpers/history.js';
import { applyCronJob } from '../../src/cron/store.js';
import { applyQuota } from '../../src/fair-share/store.js';
import { unfinishedCount } from '../../src/store/jobs.js';
import { readCheckInput } from '../../src/checker/read.js';
import { validateCronJob } from '../../src/api/validation/cronjob.js';
import { parseManifests } from '../../src/api/validation/manifest.js';
import type { CronJobRequest } from '../../src/domain/resources.js';
import { leaderAfter } from '../helpers/leader.js';

const NODES = ['node-1', 'node-2'];
let t: TestDatabase | undefined;
let cluster: Cluster | undefined;
let home: string | undefined;

afterEach(async () => {
  await cluster?.stop();
  await t?.close();
  if (home && !process.env.FENCER_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
  cluster = t = home = undefined;
});

function cronJob(name: string, schedule: string, extra: string, duration: string): CronJobRequest {
  const yaml = `apiVersion: fencer.dev/v1
kind: CronJob
metadata: { name: ${name} }
spec:
  schedule: "${schedule}"
  timeZone: Europe/Berlin
  ${extra}
  jobTemplate:
    spec: { resources: { cpu: 250m, memory: 128Mi }, duration: ${duration} }
`;
  return validateCronJob(parseManifests(yaml)[0]!);
}

async function fired(db: TestDatabase['db'], name: string): Promise<number> {
  return (
    await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM cron_occurrences WHERE cronjob LIKE '%/' || $1 AND outcome = 'Fired'",
      [name],
    )
  ).rows[0]!.n;
}

describe('CronJobs on a real cluster', () => {
  it('handle each occurrence once through a leader kill and a freeze; an edit never fires the old schedule', async () => {
    t = await freshDatabase('cronjobs');
    home = mkdtempSync(join(tmpdir(), 'fencer-cronjobs-'));
    cluster = await Cluster.start({
      replicas: 3,
      nodes: NODES.length,
      nodeCpu: '4',
      nodeMemory: '8Gi',
      databaseUrl: t.url,
      home,
      timings: DEFAULT_TIMINGS,
    });
    const every2 = cronJob('every2', '*/2 * * * * *', 'catchUp: all', '500ms');
    const solo = cronJob('solo', '* * * * * *', 'concurrencyPolicy: Forbid', '2500ms');
    const swap = cronJob('swap', '*/3 * * * * *', 'concurrencyPolicy: Replace', '5s');
    for (const c of [every2, solo, swap]) await applyCronJob(t.db, c);
    const db = t.db;
    await eventually(async () => (await fired(db, 'every2')) >= 3, {
      timeoutMs: 30_000,
      what: 'every2 to fire three times',
    });

    const first = await eventually(() => cluster!.leader(), { what: 'a leader' });
    await cluster.kill(first.name);
    await leaderAfter(cluster, first.epoch);
    const afterKill = await fired(db, 'every2');
    await eventually(async () => (await fired(db, 'every2')) >= afterKill + 2, {
      timeoutMs: 30_000,
      what: 'firing after the kill',
    });
    const second = await eventually(() => cluster!.leader(), { what: 'a leader' });
    await cluster.freeze(second.name);
    await leaderAfter(cluster, second.epoch);
    await new Promise((r) => setTimeout(r, DEFAULT_TIMINGS.leaseMs + 1000 - 0));
    await cluster.resume(second.name);
    const afterFreeze = await fired(db, 'every2');
    await eventually(async () => (await fired(db, 'every2')) >= afterFreeze + 2, {
      timeoutMs: 30_000,
      what: 'firing after the freeze',
    });

    // An edit mid-flight: from every 2 s to every 5 s; the old schedule never fires after it.
    const edited = (await applyCronJob(db, { ...every2, spec: { ...every2.spec, schedule: '*/5 * * * * *' } })).cronJob;
    const editedAt = edited.updated_at.getTime();
    await eventually(
      async () =>
        (
          await db.query(
            "SELECT 1 FROM cron_occurrences WHERE cronjob = 'default/every2' AND version = $1 AND outcome = 'Fired'",
            [edited.version],
          )
        ).rowCount! >= 2,
      {
        timeoutMs: 30_000,
        what: 'two fires on the new schedule',
      },
    );
    for (const c of [every2, solo, swap])
      await applyCronJob(db, {
        ...c,
        spec: { ...c.spec, ...(c === every2 ? { schedule: '*/5 * * * * *' } : {}), suspend: true },
      });
    await eventually(async () => (await unfinishedCount(db)) === 0, { timeoutMs: 60_000, what: 'every job to finish' });

    expect(
      await runFindings(
        db,
        NODES.map((n) => cluster!.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
    const records = (
      await db.query<{ cronjob: string; version: number; scheduled_at: Date; outcome: string; reason: string | null }>(
        'SELECT cronjob, version, scheduled_at, outcome, reason FROM cron_occurrences ORDER BY scheduled_at',
      )
    ).rows;
    const of = (name: string) => records.filter((r) => r.cronjob === `default/${name}`);
    expect(of('every2').filter((r) => r.outcome === 'Fired').length).toBeGreaterThanOrEqual(9);
    // No occurrence of the old schedule after the edit, and the new one's are 5 s apart.
    expect(of('every2').filter((r) => r.version < edited.version && r.scheduled_at.getTime() > editedAt)).toEqual([]);
    for (const r of of('every2').filter((x) => x.version === edited.version))
      expect(r.scheduled_at.getTime() % 5000).toBe(0);
    expect(of('solo').some((r) => r.reason === 'StillRunning')).toBe(true);

    // Forbid and Replace: never two runs of a CronJob's Jobs at once, by the nodes' own logs (a
    // replaced run stops on its node before its replacement starts).
    const input = await readCheckInput(
      db,
      NODES.map((n) => cluster!.nodeLogFile(n)),
    );
    expect(of('swap').some((r) => r.outcome === 'Fired')).toBe(true);
    for (const name of ['solo', 'swap']) {
      const mine = new Set(
        input.history.filter((h) => h.entity === 'job' && h.job.startsWith(`default/${name}-`)).map((h) => h.jobUid),
      );
      const events = input.runs
        .filter((l) => mine.has(l.jobUid) && (l.event === 'start' || l.event === 'stop'))
        .map((l) => ({ ms: l.wallMs, delta: l.event === 'start' ? 1 : -1 }))
        .sort((a, b) => a.ms - b.ms || a.delta - b.delta);
      let running = 0;
      let most = 0;
      for (const e of events) most = Math.max(most, (running += e.delta));
      expect(most, name).toBe(1);
    }
    expect(
      (await db.query("SELECT 1 FROM jobs WHERE name LIKE 'swap-%' AND reason = 'Replaced'")).rowCount,
    ).toBeGreaterThan(0);
  }, 180_000);

  it("after an outage, catchUp all releases the missed occurrences at the namespace's placement rate", async () => {
    t = await freshDatabase('cronjobs_outage');
    const db = t.db;
    // Made while no control plane runs, with the cursor 20 s back: an outage of 20 occurrences.
    const rated = { ...cronJob('backfill', '* * * * * *', 'catchUp: all', '200ms'), namespace: 'rated' };
    await applyCronJob(db, rated);
    await db.query("UPDATE cronjobs SET next_fire_at = date_trunc('second', now()) - interval '20 seconds'");
    await applyQuota(db, {
      namespace: 'rated',
      name: 'limits',
      labels: {},
      spec: {},
      pendingJobs: null,
      cpuLimitMillis: null,
      memoryLimitBytes: null,
      ratePerSecond: 4,
      rateBurst: 2,
    });
    home = mkdtempSync(join(tmpdir(), 'fencer-cronjobs-outage-'));
    cluster = await Cluster.start({
      replicas: 1,
      nodes: NODES.length,
      nodeCpu: '4',
      nodeMemory: '8Gi',
      databaseUrl: t.url,
      home,
      timings: DEFAULT_TIMINGS,
    });
    await eventually(async () => (await fired(db, 'backfill')) >= 20, {
      timeoutMs: 30_000,
      what: 'the missed occurrences to fire',
    });
    await applyCronJob(db, { ...rated, spec: { ...rated.spec, suspend: true } });
    await eventually(async () => (await unfinishedCount(db)) === 0, { timeoutMs: 60_000, what: 'every job to finish' });
    expect(
      await runFindings(
        db,
        NODES.map((n) => cluster!.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
    // Placed at most burst + rate × span in any span of placements: recovery did not stampede.
    const placed = await placementsOverRate(db, 'rated', 2, 4);
    expect(placed.placements).toBeGreaterThanOrEqual(20);
    expect(placed.over).toBe(0);
  }, 120_000);
});
