// The three guards of a cron fire, each alone, against a real PostgreSQL with a lease that says we
// lead at epoch 7. Each interleaving is played by calling the fire with a read taken before the
// change that should make it a no-op; each broken variant (FENCER_BREAK_GUARDS) fires anyway and
// the checker's cron findings, from the occurrence records, show the double or the wrong run.
//   - version: read (due, not suspended) → a user suspends it → the fire of that read.
//   - cursor: read → fire → the Job finishes and is pruned (history limit 0) → the same read
//     fired again (a pass that stalled across losing and winning back the lease: the epoch is
//     ours again, so the fence lets it through).
//   - name: fire → the cursor goes back to the occurrence already fired (a restored table, an
//     edit judged by a clock behind) → a fresh read fires it again.
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { fenced } from '../../src/lease/fenced.js';
import type { Lease } from '../../src/lease/lease.js';
import {
  applyCronJob,
  fireCronJob,
  pruneJobs,
  prunableJobs,
  readDueCronJobs,
  type DueCronJob,
} from '../../src/cron/store.js';
import { occurrencesBetween } from '../../src/cron/schedule.js';
import { validateCronJob } from '../../src/api/validation/cronjob.js';
import { scheduleOf } from '../../src/domain/cronjob-occurrence.js';
import { parseManifests } from '../../src/api/validation/manifest.js';
import { readCronRecords } from '../../src/checker/read.js';
import { findCronViolations } from '../../src/checker/cron-findings.js';
import type { CronJobRequest } from '../../src/domain/resources.js';
import { eventually } from '../helpers/eventually.js';

const leader = { epoch: () => 7 } as unknown as Lease;
const open: TestDatabase[] = [];

afterEach(async () => {
  delete process.env.FENCER_BREAK_GUARDS;
  await Promise.all(open.splice(0).map((t) => t.close()));
});

function cronJob(extra: string = ''): CronJobRequest {
  const yaml = `apiVersion: fencer.dev/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
  timeZone: America/New_York
  successfulJobsHistoryLimit: 0
${extra}  jobTemplate:
    spec:
      resources: {cpu: 500m, memory: 256Mi}
      duration: 1s
`;
  return validateCronJob(parseManifests(yaml)[0]!);
}

async function setup(label: string): Promise<TestDatabase> {
  const t = await freshDatabase(label);
  open.push(t);
  await t.db.query("UPDATE lease SET holder = 'test', epoch = 7, expires_at = now() + interval '1 hour'");
  await applyCronJob(t.db, cronJob());
  // Due now: the cursor back at its most recent occurrence (03:00 New York time, today or yesterday).
  const now = (await t.db.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
  const recent = occurrencesBetween(scheduleOf(cronJob().spec), new Date(now.getTime() - 2 * 86_400_000), now, 10).at(
    -1,
  )!;
  await t.db.query('UPDATE cronjobs SET next_fire_at = $1', [recent]);
  return t;
}

async function fire(t: TestDatabase, read: DueCronJob) {
  return fenced(t.db, leader, (tx) => fireCronJob(tx, read, scheduleOf(read.spec), 100, 60_000));
}

async function dueOne(t: TestDatabase): Promise<DueCronJob> {
  const [read] = await readDueCronJobs(t.db, 10);
  expect(read).toBeDefined();
  return read!;
}

async function jobCount(t: TestDatabase): Promise<number> {
  return (
    await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM history WHERE entity = 'job' AND from_state IS NULL AND job LIKE 'default/nightly-%'",
    )
  ).rows[0]!.n;
}

async function cronFindings(t: TestDatabase) {
  return findCronViolations(await readCronRecords(t.db));
}

describe.each([{ broken: false }, { broken: true }])('cron fire guards (broken: $broken)', ({ broken }) => {
  it(
    broken
      ? 'version broken: a fire read before a suspend makes a Job anyway'
      : 'version: a fire read before a suspend makes nothing',
    async () => {
      const t = await setup(`cron_version_${broken}`);
      const read = await dueOne(t);
      // The user suspends it between the read and the fire: same cursor, new version.
      await applyCronJob(t.db, cronJob('  suspend: true\n'));
      if (broken) process.env.FENCER_BREAK_GUARDS = 'cron-version';
      const result = await fire(t, read);
      expect(result.outcome).toBe(broken ? 'done' : 'stale');
      expect(await jobCount(t)).toBe(broken ? 1 : 0);
    },
  );

  it(
    broken
      ? 'cursor broken: the same read fired again runs the occurrence twice'
      : 'cursor: the same read fired again does nothing',
    async () => {
      const t = await setup(`cron_cursor_${broken}`);
      const read = await dueOne(t);
      expect((await fire(t, read)).outcome).toBe('done');
      // Its Job ends and goes (history limit 0): its name is free again.
      await t.db.query("UPDATE jobs SET phase = 'Succeeded', finished_at = now() WHERE cronjob_uid IS NOT NULL");
      const prunable = await prunableJobs(t.db, 10);
      expect(prunable).toHaveLength(1);
      await fenced(t.db, leader, (tx) => pruneJobs(tx, prunable));
      if (broken) process.env.FENCER_BREAK_GUARDS = 'cron-cursor';
      expect((await fire(t, read)).outcome).toBe(broken ? 'done' : 'stale');
      expect(await jobCount(t)).toBe(broken ? 2 : 1);
      expect((await cronFindings(t)).cronHandledTwice).toHaveLength(broken ? 1 : 0);
    },
  );

  it(
    broken
      ? 'name broken: an occurrence fired again makes a second Job'
      : 'name: an occurrence fired again is a name conflict, nothing more',
    async () => {
      const t = await setup(`cron_name_${broken}`);
      const first = await dueOne(t);
      expect((await fire(t, first)).outcome).toBe('done');
      await t.db.query('UPDATE cronjobs SET next_fire_at = $1', [first.next_fire_at]);
      if (broken) process.env.FENCER_BREAK_GUARDS = 'cron-name';
      const again = await dueOne(t);
      expect((await fire(t, again)).outcome).toBe('done');
      expect(await jobCount(t)).toBe(broken ? 2 : 1);
      // The checker sees the occurrence handled twice either way (the cursor went back behind the
      // controller's back); only with the name guard broken was it run twice.
      const [twice] = (await cronFindings(t)).cronHandledTwice;
      expect(twice?.records.map((r) => [r.outcome, r.reason])).toEqual(
        broken
          ? [
              ['Fired', null],
              ['Fired', null],
            ]
          : [
              ['Fired', null],
              ['Skipped', 'NameTaken'],
            ],
      );
    },
  );
});

describe('an edit of a CronJob with occurrences due', () => {
  it('records the old schedule’s due occurrences it passes over as Skipped (Rescheduled): none without a record', async () => {
    const t = await freshDatabase('cron_rescheduled');
    open.push(t);
    const every = (schedule: string) => {
      const request = cronJob();
      return { ...request, spec: { ...request.spec, schedule, timeZone: 'UTC' } };
    };
    await applyCronJob(t.db, every('* * * * *'));
    // Five minutes of occurrences due and not fired (no leader ran meanwhile).
    await t.db.query("UPDATE cronjobs SET next_fire_at = date_trunc('minute', now()) - interval '5 minutes'");
    const edited = (await applyCronJob(t.db, every('*/7 * * * *'))).cronJob;
    // The leader's next pass: what the new schedule has due fires under the new version.
    await t.db.query("UPDATE lease SET holder = 'test', epoch = 7, expires_at = now() + interval '1 hour'");
    for (const read of await readDueCronJobs(t.db, 10)) await fire(t, read);
    const rows = (
      await t.db.query<{ version: number; reason: string }>(
        "SELECT version, reason FROM cron_occurrences WHERE cronjob = 'default/nightly' AND version < $1",
        [edited.version],
      )
    ).rows;
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(rows.every((r) => r.reason === 'Rescheduled')).toBe(true);
    expect((await cronFindings(t)).cronMissed).toEqual([]);
  });
});

// Replace: the fire that cancels the CronJob's unfinished Job makes no new one; the occurrence
// stays due and fires once nothing of the CronJob may still run (a cancelled run's node must have
// stopped it first: cron/busy.sql). Broken, the new Job comes in the same fire.
describe.each([{ broken: false }, { broken: true }])(
  'Replace waits for the run it replaces (cron-replace-wait broken: $broken)',
  ({ broken }) => {
    it(
      broken
        ? 'makes the new Job in the fire that cancels the old one'
        : 'cancels the old Job first and makes the new one on a later pass',
      async () => {
        const t = await freshDatabase(`cron_replace_${broken}`);
        open.push(t);
        await t.db.query("UPDATE lease SET holder = 'test', epoch = 7, expires_at = now() + interval '1 hour'");
        const request = cronJob();
        await applyCronJob(t.db, {
          ...request,
          spec: { ...request.spec, schedule: '* * * * * *', timeZone: 'UTC', concurrencyPolicy: 'Replace' },
        });
        await t.db.query("UPDATE cronjobs SET next_fire_at = date_trunc('second', now())");
        expect((await fire(t, await dueOne(t))).outcome).toBe('done'); // the first Job, unfinished
        await eventually(async () => (await readDueCronJobs(t.db, 10)).length > 0, {
          what: 'the next occurrence to come due',
        });
        if (broken) process.env.FENCER_BREAK_GUARDS = 'cron-replace-wait';
        const replacing = await fire(t, await dueOne(t));
        const phases = async () =>
          (
            await t.db.query<{ phase: string }>(
              'SELECT phase FROM jobs WHERE cronjob_uid IS NOT NULL ORDER BY created_at',
            )
          ).rows.map((r) => r.phase);
        expect(replacing.outcome).toBe(broken ? 'done' : 'replacing');
        expect(await phases()).toEqual(broken ? ['Cancelled', 'Pending'] : ['Cancelled']);
        if (!broken) {
          expect((await fire(t, await dueOne(t))).outcome).toBe('done'); // nothing runs any more: now it fires
          expect(await phases()).toEqual(['Cancelled', 'Pending']);
        }
      },
    );
  },
);
