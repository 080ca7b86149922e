// A job's lifecycle at the store, decided as the leader decides it (in fenced transactions):
// retries wait a full-jitter backoff stored as the due time (and the history keeps it, which the
// checker's "never early" reads); failures of the job follow its retry policy; a run its node lost
// uses no attempt and is retried until maxDisruptions (lag is not loss); out of attempts a job is
// Dead, and a replay by a named user brings it back; a run that never started uses no attempt;
// start times; idempotent creates.
import { DEFAULT_TIMINGS, overdueSlackMs } from '../../src/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { fenced } from '../../src/lease/fenced.js';
import { commitPlacements } from '../../src/placement/store.js';
import { declareNodeDead } from '../../src/node-health/store.js';
import {
  orphanedJobs,
  retryOrphaned,
  returnUnconfirmed,
  unconfirmedAssignments,
} from '../../src/job-reconcile/store.js';

const RULE = { confirmTimeoutMs: 5000, undeliveredMs: 60_000 };
import { nameSuffixes, replayJobs, submitJob, submitJobs } from '../../src/store/jobs.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { applyReports } from '../../src/agent-protocol/reports-store.js';
import { cancelWorkflow, retryWorkflow, submitWorkflow } from '../../src/workflows/store.js';
import type { JobRequest } from '../../src/domain/resources.js';
import { backoffWindowMs } from '../../src/job-reconcile/retry.js';
import { jobRequest } from '../helpers/jobs.js';
import { workflowRequest } from '../helpers/workflows.js';

const leader = { epoch: () => 7 };
let t: TestDatabase;

beforeAll(async () => {
  t = await freshDatabase('lifecycle');
  await t.db.query(
    "UPDATE lease SET holder = 't', epoch = 7, expires_at = now() + interval '1 hour', acquired_at = now() - interval '1 hour', grace_from = now() - interval '1 hour'",
  );
  await registerNode(t.db, 'n1', 64_000, 64 * 1024 ** 3, {});
  await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
});

afterAll(async () => {
  await t?.close();
});

interface JobState {
  uid: string;
  phase: string;
  attempt: number;
  disruptions: number;
  reason: string | null;
  message: string | null;
  due_at: Date;
  assignment_id: string | null;
}

const jobOf = async (name: string) =>
  (
    await t.db.query<JobState>(
      'SELECT uid, phase, attempt, disruptions, reason, message, due_at, assignment_id FROM jobs WHERE name = $1',
      [name],
    )
  ).rows[0]!;

async function submit(request: JobRequest): Promise<string> {
  return (await submitJob(t.db, request)).job.uid;
}

/** Places the job now (the database's clock permitting): 1 when placed, 0 when not due or not pending. */
async function place(uid: string): Promise<number> {
  return fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'n1' }]));
}

/** The node runs the placed job and reports it failed; the leader decides what comes next. */
async function runAndFail(name: string): Promise<Date> {
  const { assignment_id: id } = await jobOf(name);
  expect(
    await applyReports(t.db, 'n1', [
      { kind: 'started', id: id! },
      { kind: 'finished', id: id!, outcome: 'Failed', message: 'exit code 7' },
    ]),
  ).toEqual(['ok', 'ok']);
  const decidedAt = (await t.db.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
  await fenced(t.db, leader, async (tx) => retryOrphaned(tx, await orphanedJobs(t.db, 100)));
  return decidedAt;
}

async function makeDue(uid: string): Promise<void> {
  await t.db.query('UPDATE jobs SET due_at = now() WHERE uid = $1', [uid]);
}

describe('retries', () => {
  it('wait a backoff within the full-jitter window, stored as the due time and kept in the history, then go Dead', async () => {
    const request = { ...jobRequest('backs-off'), maxAttempts: 4, backoffBaseMs: 400, backoffCapMs: 1000 };
    const uid = await submit(request);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await place(uid)).toBe(1);
      const decidedAt = await runAndFail('backs-off');
      const job = await jobOf('backs-off');
      expect(job).toMatchObject({ phase: 'Pending', attempt: attempt + 1, reason: 'Error' });
      expect(job.message).toContain('exit code 7');
      const delay = job.due_at.getTime() - decidedAt.getTime();
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(backoffWindowMs({ attempt, backoffBaseMs: 400, backoffCapMs: 1000 }) + 50);
      // The history row of the retry carries the due time the checker holds placements to.
      const row = (
        await t.db.query(
          "SELECT due_at FROM history WHERE job_uid = $1 AND entity = 'job' AND to_state = 'Pending' ORDER BY id DESC LIMIT 1",
          [uid],
        )
      ).rows[0];
      expect(row.due_at).toEqual(job.due_at);
      // Never placed before it: not while the database's clock is short of the due time.
      if (job.due_at.getTime() > Date.now() + 50) expect(await place(uid)).toBe(0);
      await makeDue(uid);
    }
    expect(await place(uid)).toBe(1);
    await runAndFail('backs-off');
    const dead = await jobOf('backs-off');
    expect(dead).toMatchObject({ phase: 'Dead', attempt: 4, reason: 'Error' });
    expect(dead.message).toMatch(/exit code 7; no attempts left \(4 of 4 used\)/);
  });

  it('are not made for a failure of a job whose retry policy is Never', async () => {
    const uid = await submit({ ...jobRequest('never'), retryPolicy: 'Never' });
    expect(await place(uid)).toBe(1);
    await runAndFail('never');
    expect(await jobOf('never')).toMatchObject({
      phase: 'Failed',
      attempt: 1,
      reason: 'Error',
      message: 'exit code 7',
    });
  });

  it('are made for runs their nodes lost, also of a Never job, using no attempt, until maxDisruptions', async () => {
    const uid = await submit({
      ...jobRequest('unlucky'),
      retryPolicy: 'Never',
      maxAttempts: 1,
      spec: { ...jobRequest('unlucky').spec, maxAttempts: 1, maxDisruptions: 2 },
    });
    for (const node of ['d1', 'd2']) {
      await registerNode(t.db, node, 4000, 8 * 1024 ** 3, {});
      await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid() WHERE name = $1', [node]);
      await makeDue(uid);
      expect(await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node }]))).toBe(1);
      const { assignment_id: id } = await jobOf('unlucky');
      expect(await applyReports(t.db, node, [{ kind: 'started', id: id! }])).toEqual(['ok']); // it ran
      await t.db.query("UPDATE node_heartbeats SET at = now() - interval '1 hour' WHERE name = $1", [node]);
      const rule = { silentMs: 5000, disconnectedMs: 1000, disconnectedQuietMs: 1500 };
      expect(await fenced(t.db, leader, (tx) => declareNodeDead(tx, node, rule, 'test'))).toBe(1);
      if (node === 'd1')
        expect(await jobOf('unlucky')).toMatchObject({
          phase: 'Pending',
          attempt: 1,
          disruptions: 1,
          reason: 'NodeDied',
        });
    }
    const job = await jobOf('unlucky');
    expect(job).toMatchObject({ phase: 'Dead', attempt: 1, disruptions: 2, reason: 'TooManyDisruptions' });
    expect(job.message).toMatch(/node d2 died: test; its nodes lost 2 of its runs \(maxDisruptions 2\)/);
  });

  it('use no attempt for a placement its node died before claiming', async () => {
    const uid = await submit({ ...jobRequest('unclaimed'), maxAttempts: 1 });
    await registerNode(t.db, 'd3', 4000, 8 * 1024 ** 3, {});
    await t.db.query("UPDATE nodes SET watch_session = gen_random_uuid() WHERE name = 'd3'");
    expect(await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'd3' }]))).toBe(
      1,
    );
    await t.db.query("UPDATE node_heartbeats SET at = now() - interval '1 hour' WHERE name = 'd3'");
    const rule = { silentMs: 5000, disconnectedMs: 1000, disconnectedQuietMs: 1500 };
    expect(await fenced(t.db, leader, (tx) => declareNodeDead(tx, 'd3', rule, 'test'))).toBe(1);
    expect(await jobOf('unclaimed')).toMatchObject({ phase: 'Pending', attempt: 1, reason: 'NodeDied' });
  });

  it('follow how the run ended when the decision commits, not when the leader first looked', async () => {
    // The node gave the run up (Lost), the leader saw that; then the node's late outcome arrived:
    // the run had failed. The job asked for no retry of its own failures.
    const uid = await submit({ ...jobRequest('late-outcome'), retryPolicy: 'Never' });
    expect(await place(uid)).toBe(1);
    const { assignment_id: id } = await jobOf('late-outcome');
    expect(
      await applyReports(t.db, 'n1', [
        { kind: 'started', id: id! },
        { kind: 'abandoned', id: id! },
      ]),
    ).toEqual(['ok', 'ok']);
    const seen = (await orphanedJobs(t.db, 100)).filter((o) => o.job_uid === uid);
    expect(seen.map((o) => o.state)).toEqual(['Lost']);
    expect(
      await applyReports(t.db, 'n1', [{ kind: 'finished', id: id!, outcome: 'Failed', message: 'exit code 5' }]),
    ).toEqual(['ok']);
    await fenced(t.db, leader, (tx) => retryOrphaned(tx, seen));
    expect(await jobOf('late-outcome')).toMatchObject({
      phase: 'Failed',
      attempt: 1,
      reason: 'Error',
      message: 'exit code 5',
    });
  });

  it('use no attempt for a run that never started (placement never confirmed)', async () => {
    const uid = await submit({ ...jobRequest('unconfirmed'), maxAttempts: 1 });
    expect(await place(uid)).toBe(1);
    const { assignment_id: id } = await jobOf('unconfirmed');
    await t.db.query("UPDATE assignments SET confirm_by = now() - interval '1 second' WHERE id = $1", [id]); // its confirm timeout passed
    await fenced(t.db, leader, (tx) => returnUnconfirmed(tx, [{ id: id!, job_uid: uid }], RULE));
    expect(await jobOf('unconfirmed')).toMatchObject({ phase: 'Pending', attempt: 1, reason: 'NotConfirmed' });
  });

  // Its deadline starts when a replica sends it to the node; one that no replica could send (its
  // node's stream is held by a replica that cannot read snapshots) is taken back after undeliveredMs.
  it('take back a placement never sent to its node, only after the undelivered bound', async () => {
    const uid = await submit(jobRequest('unsent'));
    expect(await place(uid)).toBe(1);
    const { assignment_id: id } = await jobOf('unsent');
    expect((await unconfirmedAssignments(t.db, 100, RULE)).map((a) => a.id)).not.toContain(id);
    await t.db.query("UPDATE assignments SET created_at = now() - interval '2 seconds' WHERE id = $1", [id]); // placed 2 s ago, never sent
    expect((await unconfirmedAssignments(t.db, 100, RULE)).map((a) => a.id)).not.toContain(id);
    const short = { ...RULE, undeliveredMs: 1000 };
    expect((await unconfirmedAssignments(t.db, 100, short)).map((a) => a.id)).toContain(id);
    await fenced(t.db, leader, (tx) => returnUnconfirmed(tx, [{ id: id!, job_uid: uid }], short));
    expect(await jobOf('unsent')).toMatchObject({ phase: 'Pending', attempt: 1, reason: 'NotConfirmed' });
  });
});

describe('dead letters', () => {
  it('are replayed with fresh attempts, the history naming who asked; a workflow job is left to its workflow', async () => {
    const uid = await submit({ ...jobRequest('letter'), maxAttempts: 1 });
    expect(await place(uid)).toBe(1);
    await runAndFail('letter');
    expect((await jobOf('letter')).phase).toBe('Dead');
    const replayed = await replayJobs(t.db, 'default', { name: 'letter' }, 'alice');
    expect(replayed.map((j) => j.name)).toEqual(['letter']);
    expect(await jobOf('letter')).toMatchObject({
      phase: 'Pending',
      attempt: 1,
      reason: 'Replayed',
      message: 'replayed by alice',
    });
    const row = (
      await t.db.query(
        'SELECT from_state, to_state, reason, actor FROM history WHERE job_uid = $1 ORDER BY id DESC LIMIT 1',
        [uid],
      )
    ).rows[0];
    expect(row).toEqual({ from_state: 'Dead', to_state: 'Pending', reason: 'Replayed', actor: 'alice' });
    // Only dead letters move.
    expect(await replayJobs(t.db, 'default', { name: 'letter' }, 'alice')).toEqual([]);

    const created = await submitWorkflow(
      t.db,
      workflowRequest('wf-dead', [{ name: 'only', template: { maxAttempts: 1 } }]),
    );
    expect(created.outcome).toBe('created');
    const only = await jobOf('wf-dead-only');
    expect(await place(only.uid)).toBe(1);
    await runAndFail('wf-dead-only');
    expect((await jobOf('wf-dead-only')).phase).toBe('Dead');
    expect(await replayJobs(t.db, 'default', { labels: { 'fencer.dev/workflow': 'wf-dead' } }, 'bob')).toEqual([]);
  });
});

describe("a workflow's retry", () => {
  // A cancel reaches a node through its watch stream, which may be late: the node may still run
  // the cancelled job. The retry must not place it again before that run has surely ended (the
  // node ends it by itself at its duration, begun within the confirm timeout of its claim).
  it('does not make a job due before a cancelled run of it can have ended, nor before its start time', async () => {
    const slackMs = 5000;
    await submitWorkflow(
      t.db,
      workflowRequest('cr', [
        { name: 'long', template: { duration: '30s' } },
        { name: 'later', template: { startAfter: '1h' } },
      ]),
    );
    const long = await jobOf('cr-long');
    expect(await place(long.uid)).toBe(1);
    const { assignment_id: id } = await jobOf('cr-long');
    expect(await applyReports(t.db, 'n1', [{ kind: 'started', id: id! }])).toEqual(['ok']);
    expect((await cancelWorkflow(t.db, 'default', 'cr', 'dave', overdueSlackMs(DEFAULT_TIMINGS))).outcome).toBe('done');
    await t.db.query("UPDATE workflows SET phase = 'Cancelled' WHERE name = 'cr'"); // closed, as the leader's pass closes it
    expect((await retryWorkflow(t.db, 'default', 'cr', 'dave', slackMs)).outcome).toBe('done');
    const started = (await t.db.query<{ started_at: Date }>('SELECT started_at FROM assignments WHERE id = $1', [id]))
      .rows[0]!.started_at;
    const retried = await jobOf('cr-long');
    expect(retried.phase).toBe('Pending');
    expect(retried.due_at.getTime()).toBe(started.getTime() + 30_000 + slackMs);
    expect(await place(long.uid)).toBe(0);
    const later = await jobOf('cr-later');
    expect(later.due_at.getTime()).toBeGreaterThan(Date.now() + 3_500_000);
  });
});

describe('start times', () => {
  it('make a job due then by the database clock, and the history says so', async () => {
    const before = (await t.db.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    const later = await submit({ ...jobRequest('later'), startAfterMs: 60_000 });
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const fixed = await submit({ ...jobRequest('at-a-time'), startAt: at });
    const due = (await jobOf('later')).due_at.getTime() - before.getTime();
    expect(due).toBeGreaterThanOrEqual(60_000);
    expect(due).toBeLessThan(70_000);
    expect((await jobOf('at-a-time')).due_at.toISOString()).toBe(at);
    expect(await place(later)).toBe(0);
    expect(await place(fixed)).toBe(0);
    const first = (
      await t.db.query("SELECT due_at FROM history WHERE job_uid = $1 AND entity = 'job' ORDER BY id LIMIT 1", [fixed])
    ).rows[0];
    expect(first.due_at.toISOString()).toBe(at);
  });
});

describe('creates without a name', () => {
  it('with generateName and one Idempotency-Key make one job, however often and however concurrently retried', async () => {
    const request = { ...jobRequest(''), generateName: 'report-' };
    const claim = (key: string) => ({ key, subject: 'alice', bodyHash: 'same', ttlMs: 3_600_000 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => submitJob(t.db, request, claim('key-1'))));
    const names = new Set(answers.map((a) => a.job.name));
    expect(names.size).toBe(1);
    const [name] = names;
    expect(name).toMatch(/^report-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(answers.filter((a) => a.outcome === 'created')).toHaveLength(1);
    const count = (await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE name LIKE 'report-%'")).rows[0].n;
    expect(count).toBe(1);
    // Another key, another job.
    const other = await submitJob(t.db, request, claim('key-2'));
    expect(other.outcome).toBe('created');
    expect(other.job.name).not.toBe(name);
  });

  // Five random characters collide, in a big batch or with an older job: a generated name that is
  // taken is drawn again, never taken for "that job, unchanged" (which would drop the new one).
  it('draws a generated name again when it is taken, within a batch or by an existing job', async () => {
    const draws = ['ccccc', 'ccccc', 'ddddd', 'ccccc', 'fffff', 'ggggg'];
    const real = nameSuffixes.next;
    nameSuffixes.next = () => draws.shift() ?? real();
    try {
      const request = { ...jobRequest(''), generateName: 'batch-' };
      const batch = await submitJobs(t.db, [request, request]);
      expect(batch.outcome).toBe('accepted');
      if (batch.outcome !== 'accepted') return;
      expect(batch.results.map((r) => [r.outcome, r.job.name])).toEqual([
        ['created', 'batch-ccccc'],
        ['created', 'batch-ddddd'],
      ]);
      // batch-ccccc exists with the same spec: the next draw is not "unchanged" but another job.
      const single = await submitJob(t.db, request);
      expect([single.outcome, single.job.name]).toEqual(['created', 'batch-fffff']);
    } finally {
      nameSuffixes.next = real;
    }
    expect((await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE name LIKE 'batch-%'")).rows[0].n).toBe(3);
  });
});
