// A node's batch of reports, applied in one transaction over arrays: only the node's own active
// assignments change, a short job's start and finish may share a batch, an assignment ends once,
// and whatever ended gives its resources back. Breaking the row condition (dropping "a.node = $3"
// from agent-protocol/end_reported, or "node = $2" from agent-protocol/start) makes the other node's
// assignment change here, and this test fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { fenced } from '../../src/lease/fenced.js';
import { commitPlacements } from '../../src/placement/store.js';
import { declareNodeDead } from '../../src/node-health/store.js';
import { orphanedJobs, retryOrphaned } from '../../src/job-reconcile/store.js';
import { submitJob } from '../../src/store/jobs.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { applyReports } from '../../src/agent-protocol/reports-store.js';
import { jobRequest } from '../helpers/jobs.js';

const leader = { epoch: () => 7 };

describe('a node report batch', () => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await freshDatabase('reports');
    await t.db.query("UPDATE lease SET holder = 't', epoch = 7, expires_at = now() + interval '1 hour'");
    await registerNode(t.db, 'n1', 4000, 8 * 1024 ** 3, {});
    await registerNode(t.db, 'n2', 4000, 8 * 1024 ** 3, {});
    await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
  });

  afterAll(async () => {
    await t?.close();
  });

  async function place(name: string, node: string): Promise<string> {
    const uid = (await submitJob(t.db, jobRequest(name))).job.uid;
    expect(await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node }]))).toBe(1);
    return (await t.db.query<{ id: string }>('SELECT id FROM assignments WHERE job_uid = $1', [uid])).rows[0]!.id;
  }

  const phase = async (name: string) =>
    (await t.db.query<{ phase: string }>('SELECT phase FROM jobs WHERE name = $1', [name])).rows[0]!.phase;
  const state = async (id: string) =>
    (await t.db.query<{ state: string }>('SELECT state FROM assignments WHERE id = $1', [id])).rows[0]!.state;
  const allocated = async (node: string) =>
    Number(
      (await t.db.query<{ cpu: string }>('SELECT allocated_cpu_millis AS cpu FROM nodes WHERE name = $1', [node]))
        .rows[0]!.cpu,
    );

  it('changes only the node own active assignments and answers each report in order', async () => {
    const short = await place('short', 'n1');
    const failing = await place('failing', 'n1');
    const given = await place('given-up', 'n1');
    const long = await place('long', 'n1');
    const elsewhere = await place('elsewhere', 'n2');
    expect(await allocated('n1')).toBe(2000);

    const outcomes = await applyReports(t.db, 'n1', [
      { kind: 'started', id: short },
      { kind: 'started', id: failing },
      { kind: 'started', id: long },
      { kind: 'started', id: elsewhere }, // n2's: not n1's to start
      { kind: 'finished', id: short, outcome: 'Succeeded', message: null },
      { kind: 'finished', id: failing, outcome: 'Failed', message: 'exit 3' },
      { kind: 'finished', id: short, outcome: 'Failed', message: 'again' }, // ends once
      { kind: 'abandoned', id: given },
      { kind: 'finished', id: elsewhere, outcome: 'Succeeded', message: null }, // not n1's to end
    ]);
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'not-active', 'ok', 'ok', 'not-active', 'ok', 'not-active']);

    expect(await phase('short')).toBe('Succeeded');
    // A failure is the leader's to decide (retry, Failed or Dead): the report only ends the run.
    expect(await phase('failing')).toBe('Running');
    expect(await state(failing)).toBe('Failed');
    expect((await t.db.query('SELECT message FROM assignments WHERE id = $1', [failing])).rows[0].message).toBe(
      'exit 3',
    );
    expect(await phase('long')).toBe('Running');
    expect(await state(given)).toBe('Lost'); // the leader gives the job back, not the report
    expect(await state(elsewhere)).toBe('Assigned');
    expect(await phase('elsewhere')).toBe('Assigned');
    expect(await allocated('n1')).toBe(500); // only "long" still holds
    expect(await allocated('n2')).toBe(500);

    // The history shows the short job's start before its end, as if reported one by one.
    const history = (
      await t.db.query<{ to_state: string }>(
        "SELECT to_state FROM history WHERE job = 'default/short' AND entity = 'job' ORDER BY id",
      )
    ).rows;
    expect(history.map((r) => r.to_state)).toEqual(['Pending', 'Assigned', 'Running', 'Succeeded']);

    // Reports about what already ended change nothing.
    expect(
      await applyReports(t.db, 'n1', [
        { kind: 'started', id: short },
        { kind: 'abandoned', id: failing },
      ]),
    ).toEqual(['not-active', 'not-active']);
    expect(await phase('short')).toBe('Succeeded');
    expect(await allocated('n1')).toBe(500);
    expect(await applyReports(t.db, 'n1', [])).toEqual([]);
  });

  it('takes the outcome of a run whose node was declared dead before it got through, until the job is placed again', async () => {
    await registerNode(t.db, 'n3', 4000, 8 * 1024 ** 3, {});
    await t.db.query("UPDATE nodes SET watch_session = gen_random_uuid() WHERE name = 'n3'");
    const late = await place('late-news', 'n3');
    const later = await place('too-late', 'n3');
    expect(
      await applyReports(t.db, 'n3', [
        { kind: 'started', id: late },
        { kind: 'started', id: later },
      ]),
    ).toEqual(['ok', 'ok']);
    // n3 is declared dead with both running: both jobs go back to Pending (attempt 2).
    await t.db.query("UPDATE node_heartbeats SET at = now() - interval '1 hour' WHERE name = 'n3'");
    await t.db.query(
      "UPDATE lease SET acquired_at = now() - interval '1 hour', grace_from = now() - interval '1 hour'",
    );
    const rule = { silentMs: 5000, disconnectedMs: 1000, disconnectedQuietMs: 1500 };
    expect(await fenced(t.db, leader, (tx) => declareNodeDead(tx, 'n3', rule, 'test'))).toBe(2);
    expect(await phase('too-late')).toBe('Pending');
    await t.db.query("UPDATE jobs SET due_at = now() WHERE name = 'too-late'"); // its retry backoff is over
    // too-late is placed again before its node's report gets through; late-news is not.
    const uid = (await t.db.query<{ uid: string }>("SELECT uid FROM jobs WHERE name = 'too-late'")).rows[0]!.uid;
    expect(await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'n2' }]))).toBe(
      1,
    );

    const outcomes = await applyReports(t.db, 'n3', [
      { kind: 'finished', id: late, outcome: 'Succeeded', message: null },
      { kind: 'finished', id: later, outcome: 'Succeeded', message: null },
    ]);
    expect(outcomes).toEqual(['ok', 'not-active']);
    expect(await phase('late-news')).toBe('Succeeded');
    expect(await state(late)).toBe('Succeeded');
    expect(await phase('too-late')).toBe('Assigned'); // its new placement stands
    expect(await state(later)).toBe('Lost');
    // Only an outcome: a Lost assignment is never started or abandoned again.
    expect(
      await applyReports(t.db, 'n3', [
        { kind: 'started', id: later },
        { kind: 'abandoned', id: later },
      ]),
    ).toEqual(['not-active', 'not-active']);
  });

  it('takes the outcome of a run given up (Lost) before the leader gave its job back', async () => {
    const given = await place('given-then-done', 'n1');
    expect(
      await applyReports(t.db, 'n1', [
        { kind: 'started', id: given },
        { kind: 'abandoned', id: given },
      ]),
    ).toEqual(['ok', 'ok']);
    expect(await phase('given-then-done')).toBe('Running'); // job-reconcile has not given it back yet
    expect(
      await applyReports(t.db, 'n1', [{ kind: 'finished', id: given, outcome: 'Succeeded', message: null }]),
    ).toEqual(['ok']);
    expect(await phase('given-then-done')).toBe('Succeeded');
  });

  it('gives a claim the node gave back unrun (answered too late) back without using an attempt', async () => {
    const late = await place('claimed-late', 'n1');
    const ran = await place('ran-then-fenced', 'n1');
    expect(
      await applyReports(t.db, 'n1', [
        { kind: 'started', id: late },
        { kind: 'started', id: ran },
        { kind: 'abandoned', id: late, neverRan: true },
        { kind: 'abandoned', id: ran },
      ]),
    ).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(await state(late)).toBe('Unconfirmed');
    expect(await state(ran)).toBe('Lost');
    const orphans = (await orphanedJobs(t.db, 100)).filter((o) => o.id === late || o.id === ran);
    await fenced(t.db, leader, (tx) => retryOrphaned(tx, orphans));
    const job = async (name: string) =>
      (await t.db.query('SELECT phase, attempt, disruptions, reason FROM jobs WHERE name = $1', [name])).rows[0];
    expect(await job('claimed-late')).toEqual({ phase: 'Pending', attempt: 1, disruptions: 0, reason: 'NotConfirmed' });
    // A run its node stopped (self-fence, shutdown) is a disruption: it uses no attempt.
    expect(await job('ran-then-fenced')).toEqual({ phase: 'Pending', attempt: 1, disruptions: 1, reason: 'NodeLost' });
  });
});
