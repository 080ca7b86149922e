// The workflow's and the matching's guards, each with its broken variant run here too
// (FENCER_BREAK_GUARDS, src/testing/broken-guards.ts): placement honours a workflow's pool and a job's node
// selector; the leader's workflow pass skips a job whose need failed, and writes nothing once
// deposed (the fence). The controllers run in this process
// against a real PostgreSQL, with a lease that says we lead at epoch 7.
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { submitWorkflow } from '../../src/workflows/store.js';
import { LeaseLostError } from '../../src/errors/lease-lost-error.js';
import { Placement } from '../../src/placement/controller.js';
import { WorkflowController } from '../../src/workflows/controller.js';
import { fenced } from '../../src/lease/fenced.js';
import { applyReports } from '../../src/agent-protocol/reports-store.js';
import { orphanedJobs, retryOrphaned } from '../../src/job-reconcile/store.js';
import type { Lease } from '../../src/lease/lease.js';
import { workflowRequest } from '../helpers/workflows.js';

const leader = { epoch: () => 7 } as unknown as Lease;
const log = pino({ level: 'silent' });
const open: TestDatabase[] = [];

afterEach(async () => {
  delete process.env.FENCER_BREAK_GUARDS;
  await Promise.all(open.splice(0).map((t) => t.close()));
});

async function setup(label: string): Promise<TestDatabase> {
  const t = await freshDatabase(label);
  open.push(t);
  await t.db.query("UPDATE lease SET holder = 'test', epoch = 7, expires_at = now() + interval '1 hour'");
  return t;
}

async function connect(t: TestDatabase): Promise<void> {
  await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
}

const placement = (t: TestDatabase) => new Placement(t.db, leader, 100, 1000, 60_000); // up to 1,000 unclaimed per node
const workflows = (t: TestDatabase) => new WorkflowController(t.db, leader, 200);
const nodeOf = async (t: TestDatabase, job: string) =>
  (await t.db.query<{ node: string | null }>('SELECT node FROM jobs WHERE name = $1', [job])).rows[0]!.node;
const phaseOf = async (t: TestDatabase, job: string) =>
  (await t.db.query<{ phase: string }>('SELECT phase FROM jobs WHERE name = $1', [job])).rows[0]!.phase;
const assignmentOf = async (t: TestDatabase, job: string) =>
  (await t.db.query<{ assignment_id: string }>('SELECT assignment_id FROM jobs WHERE name = $1', [job])).rows[0]!
    .assignment_id;

/** Runs a job to its end as its node would report it (start, then finish). */
async function finish(t: TestDatabase, job: string, outcome: 'Succeeded' | 'Failed'): Promise<void> {
  const id = await assignmentOf(t, job);
  const node = (await nodeOf(t, job))!;
  expect(
    await applyReports(t.db, node, [
      { kind: 'started', id },
      { kind: 'finished', id, outcome, message: outcome === 'Failed' ? 'exit code 2' : null },
    ]),
  ).toEqual(['ok', 'ok']);
  await fenced(t.db, leader, async (tx) => retryOrphaned(tx, await orphanedJobs(t.db, 100)));
}

describe.each([{ broken: false }, { broken: true }])('placement honours matching (broken: $broken)', ({ broken }) => {
  it(
    broken
      ? 'puts a pool job outside its pool when the pool is ignored'
      : "places a workflow's jobs only on nodes of its pool",
    async () => {
      const t = await setup(`pool_${broken}`);
      // The other pool's node is the tighter fit: best fit would choose it if the pool were not asked.
      await registerNode(t.db, 'big-ci', 8000, 16 * 1024 ** 3, { pool: 'ci' });
      await registerNode(t.db, 'small-batch', 1000, 1024 ** 3, { pool: 'batch' });
      await connect(t);
      await submitWorkflow(t.db, workflowRequest('p', [{ name: 'a' }], { pool: 'ci' }));
      if (broken) process.env.FENCER_BREAK_GUARDS = 'pool-match';
      await placement(t).reconcile(log);
      expect(await nodeOf(t, 'p-a')).toBe(broken ? 'small-batch' : 'big-ci');
    },
  );

  it(
    broken ? 'ignores a node selector when labels are ignored' : 'places a job only on nodes its selector matches',
    async () => {
      const t = await setup(`labels_${broken}`);
      await registerNode(t.db, 'big-windows', 8000, 16 * 1024 ** 3, { os: 'windows' });
      await registerNode(t.db, 'small-linux', 1000, 1024 ** 3, { os: 'linux' });
      await connect(t);
      await submitWorkflow(t.db, workflowRequest('l', [{ name: 'a', template: { nodeSelector: { os: 'windows' } } }]));
      if (broken) process.env.FENCER_BREAK_GUARDS = 'label-match';
      await placement(t).reconcile(log);
      expect(await nodeOf(t, 'l-a')).toBe(broken ? 'small-linux' : 'big-windows');
    },
  );
});

describe.each([{ broken: false }, { broken: true }])(
  'the workflow pass skips blocked jobs (broken: $broken)',
  ({ broken }) => {
    it(
      broken
        ? 'leaves a job whose need failed waiting forever, and the workflow open'
        : 'skips the dependents of a failed job, naming the need, and closes the workflow Failed',
      async () => {
        const t = await setup(`skip_${broken}`);
        await registerNode(t.db, 'n1', 8000, 16 * 1024 ** 3, {});
        await connect(t);
        await submitWorkflow(
          t.db,
          workflowRequest('s', [
            { name: 'build', template: { retryPolicy: 'Never' } },
            { name: 'test', needs: ['build'] },
            { name: 'release', needs: ['test'] },
            { name: 'lint' },
          ]),
        );
        if (broken) process.env.FENCER_BREAK_GUARDS = 'skip-blocked';
        await placement(t).reconcile(log);
        await finish(t, 's-build', 'Failed');
        await finish(t, 's-lint', 'Succeeded');
        while ((await workflows(t).reconcile(log)) === 'requeue');
        expect(await phaseOf(t, 's-build')).toBe('Failed');
        const skipped = (
          await t.db.query(
            "SELECT name, phase, reason, message FROM jobs WHERE name IN ('s-test', 's-release') ORDER BY name",
          )
        ).rows;
        const workflow = (await t.db.query("SELECT phase FROM workflows WHERE name = 's'")).rows[0].phase;
        if (broken) {
          expect(skipped.map((j) => j.phase)).toEqual(['Pending', 'Pending']);
          expect(workflow).toBe('Running');
        } else {
          expect(skipped).toEqual([
            { name: 's-release', phase: 'Skipped', reason: 'NeedSkipped', message: 'need s-test ended Skipped' },
            { name: 's-test', phase: 'Skipped', reason: 'NeedFailed', message: 'need s-build ended Failed' },
          ]);
          expect(workflow).toBe('Failed');
        }
      },
    );
  },
);

describe.each([{ broken: false }, { broken: true }])('the workflow pass is fenced (broken: $broken)', ({ broken }) => {
  // Another replica took the lease (epoch 8) while this one still believes it leads at 7.
  it(broken ? 'lets a deposed leader release jobs' : 'writes nothing for a deposed leader', async () => {
    const t = await setup(`fence_${broken}`);
    await registerNode(t.db, 'n1', 8000, 16 * 1024 ** 3, {});
    await connect(t);
    await submitWorkflow(t.db, workflowRequest('f', [{ name: 'build' }, { name: 'deploy', needs: ['build'] }]));
    await placement(t).reconcile(log);
    await finish(t, 'f-build', 'Succeeded');
    await t.db.query('UPDATE lease SET epoch = 8');
    if (broken) process.env.FENCER_BREAK_GUARDS = 'fence';
    const pass = workflows(t).reconcile(log);
    if (broken) await pass;
    else await expect(pass).rejects.toThrow(LeaseLostError);
    const deploy = (await t.db.query("SELECT waiting FROM jobs WHERE name = 'f-deploy'")).rows[0];
    expect(deploy.waiting).toBe(!broken);
  });
});

describe('the workflow pass', () => {
  // Each waiting job is judged alone: five hundred workflows that wait on long runs hold back no
  // other (a pass once looked only at the oldest 500 workflows with waiting jobs).
  it('releases a ready job behind five hundred workflows that wait', async () => {
    const t = await setup('liveness');
    await registerNode(t.db, 'n1', 1_000_000, 1024 ** 4, {}, null, null, [], 1000); // room for every first job at once
    await connect(t);
    for (let i = 0; i < 500; i++) {
      await submitWorkflow(t.db, workflowRequest(`busy-${i}`, [{ name: 'long' }, { name: 'next', needs: ['long'] }]));
    }
    await submitWorkflow(t.db, workflowRequest('last', [{ name: 'first' }, { name: 'then', needs: ['first'] }]));
    while ((await placement(t).reconcile(log)) === 'requeue');
    await finish(t, 'last-first', 'Succeeded');
    while ((await workflows(t).reconcile(log)) === 'requeue');
    expect((await t.db.query("SELECT waiting FROM jobs WHERE name = 'last-then'")).rows[0].waiting).toBe(false);
  }, 60_000);
});
