// The database's own guards: one active assignment per job (unique index), no node overcommitted
// nor given more runs than its max jobs (CHECK constraints, checked in the placing transaction), claims only of pending jobs, and an
// append-only history. Each guard test also runs against a database with that guard removed
// and shows the bad outcome then happens.
import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { fenced } from '../../src/lease/fenced.js';
import { commitPlacements } from '../../src/placement/store.js';
import { submitJob } from '../../src/store/jobs.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { withJobDefaults, type JobRequest } from '../../src/domain/resources.js';

const open: TestDatabase[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

const leader = { epoch: () => 7 };

async function setup(label: string, breakWith?: string): Promise<TestDatabase> {
  const t = await freshDatabase(label);
  open.push(t);
  if (breakWith) await t.db.query(breakWith);
  await t.db.query("UPDATE lease SET holder = 'test', epoch = 7, expires_at = now() + interval '1 hour'");
  await registerNode(t.db, 'small', 2000, 2 * 1024 ** 3, {});
  await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
  return t;
}

function job(name: string, cpuMillis: number): JobRequest {
  return withJobDefaults({
    namespace: 'default',
    name,
    labels: {},
    spec: { resources: { cpu: `${cpuMillis}m`, memory: '256Mi' }, duration: '1s', maxAttempts: 3 },
    cpuMillis,
    memoryBytes: 256 * 1024 ** 2,
    durationMs: 1000,
    nodeSelector: {},
    maxAttempts: 3,
  });
}

async function submit(t: TestDatabase, name: string, cpuMillis: number): Promise<string> {
  const result = await submitJob(t.db, job(name, cpuMillis));
  return result.job.uid;
}

describe.each([
  { guard: 'intact', breakWith: undefined },
  { guard: 'removed', breakWith: 'DROP INDEX one_active_assignment_per_job' },
])('one active assignment per job ($guard)', ({ breakWith }) => {
  it(
    breakWith ? 'lets a second active assignment in' : 'refuses a second active assignment, whoever writes it',
    async () => {
      const t = await setup('unique', breakWith);
      const uid = await submit(t, 'once', 500);
      expect(
        await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'small' }])),
      ).toBe(1);
      const second = t.db.query(
        "INSERT INTO assignments (id, job_uid, node, epoch, attempt, state, cpu_millis, memory_bytes, duration_ms, confirm_by) VALUES ($1, $2, 'small', 7, 1, 'Assigned', 1, 1, 1, now())",
        [randomUUID(), uid],
      );
      if (breakWith) await second;
      else await expect(second).rejects.toThrow(/one_active_assignment_per_job/);
      const active = (
        await t.db.query(
          "SELECT count(*)::int AS n FROM assignments WHERE job_uid = $1 AND state IN ('Assigned', 'Running')",
          [uid],
        )
      ).rows[0].n;
      expect(active).toBe(breakWith ? 2 : 1);
    },
  );
});

describe.each([
  { guard: 'intact', breakWith: undefined },
  { guard: 'removed', breakWith: 'ALTER TABLE nodes DROP CONSTRAINT allocation_within_capacity' },
])('node capacity checked in the placing transaction ($guard)', ({ breakWith }) => {
  it(
    breakWith ? 'lets a node be overcommitted' : 'refuses a round that would overcommit a node, writing nothing of it',
    async () => {
      const t = await setup('capacity', breakWith);
      const a = await submit(t, 'a', 1500);
      const b = await submit(t, 'b', 1500); // 3 CPUs asked of a 2-CPU node, as a buggy or stale plan might
      const round = fenced(t.db, leader, (tx, epoch) =>
        commitPlacements(tx, epoch, [
          { jobUid: a, node: 'small' },
          { jobUid: b, node: 'small' },
        ]),
      );
      if (breakWith) await round;
      else await expect(round).rejects.toThrow(/allocation_within_capacity/);
      const node = (await t.db.query("SELECT allocated_cpu_millis FROM nodes WHERE name = 'small'")).rows[0];
      const pending = (await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE phase = 'Pending'")).rows[0].n;
      expect(node.allocated_cpu_millis).toBe(breakWith ? 3000 : 0);
      expect(pending).toBe(breakWith ? 0 : 2);
    },
  );
});

describe.each([
  { guard: 'intact', breakWith: undefined },
  { guard: 'removed', breakWith: 'ALTER TABLE nodes DROP CONSTRAINT jobs_within_capacity' },
])("a node's most runs at once checked in the placing transaction ($guard)", ({ breakWith }) => {
  it(
    breakWith
      ? 'lets a node hold more runs than its max jobs'
      : 'refuses a round that would give a node more runs than its max jobs, writing nothing of it',
    async () => {
      const t = await setup('max_jobs', breakWith);
      await t.db.query("UPDATE nodes SET max_jobs = 1 WHERE name = 'small'");
      const a = await submit(t, 'a', 100);
      const b = await submit(t, 'b', 100); // two tiny runs on a node of one, as a buggy or stale plan might
      const round = fenced(t.db, leader, (tx, epoch) =>
        commitPlacements(tx, epoch, [
          { jobUid: a, node: 'small' },
          { jobUid: b, node: 'small' },
        ]),
      );
      if (breakWith) await round;
      else await expect(round).rejects.toThrow(/jobs_within_capacity/);
      const node = (await t.db.query("SELECT allocated_jobs FROM nodes WHERE name = 'small'")).rows[0];
      const pending = (await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE phase = 'Pending'")).rows[0].n;
      expect(node.allocated_jobs).toBe(breakWith ? 2 : 0);
      expect(pending).toBe(breakWith ? 0 : 2);
    },
  );
});

describe('claims', () => {
  it('place only jobs that are still pending', async () => {
    const t = await setup('claims');
    const uid = await submit(t, 'claimed', 500);
    const place = () =>
      fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'small' }]));
    expect(await place()).toBe(1);
    expect(await place()).toBe(0); // the same decision again (a replayed round) changes nothing
    expect((await t.db.query('SELECT allocated_cpu_millis FROM nodes')).rows[0].allocated_cpu_millis).toBe(500);
  });

  it('place no job before it is due by the database clock', async () => {
    const t = await setup('due');
    const uid = await submit(t, 'later', 500);
    await t.db.query("UPDATE jobs SET due_at = now() + interval '1 hour' WHERE uid = $1", [uid]);
    expect(
      await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'small' }])),
    ).toBe(0);
  });
});

describe('history', () => {
  it('records every change with the deciding epoch and replica, and cannot be rewritten', async () => {
    const t = await setup('history');
    const uid = await submit(t, 'tracked', 500);
    await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'small' }]));
    const rows = (
      await t.db.query(
        'SELECT entity, from_state, to_state, epoch, replica, node FROM history WHERE job_uid = $1 ORDER BY id',
        [uid],
      )
    ).rows;
    expect(rows).toEqual([
      { entity: 'job', from_state: null, to_state: 'Pending', epoch: null, replica: 'test', node: null },
      { entity: 'job', from_state: 'Pending', to_state: 'Assigned', epoch: 7, replica: 'test', node: 'small' },
      { entity: 'assignment', from_state: null, to_state: 'Assigned', epoch: 7, replica: 'test', node: 'small' },
    ]);
    await expect(t.db.query('UPDATE history SET to_state = $1', ['Succeeded'])).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM history')).rejects.toThrow(/append-only/);
  });
});
