// node-health against a real database and a real lease: a quiet node is declared dead; when
// most nodes fall quiet at once, node-health holds off (the control plane is the likelier one
// cut off) for as long as its rule says, then declares them after all.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { Lease } from '../../src/lease/lease.js';
import { NodeHealth, deathRule } from '../../src/node-health/controller.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { closeWatch, heartbeat, openWatch, registerNode } from '../../src/agent-protocol/nodes-store.js';
import { commitPlacements, readPlacementInput } from '../../src/placement/store.js';
import { declareNodeDead } from '../../src/node-health/store.js';
import { JobReconcile } from '../../src/job-reconcile/controller.js';
import { fenced } from '../../src/lease/fenced.js';
import { submitJob } from '../../src/store/jobs.js';
import { applyReports } from '../../src/agent-protocol/reports-store.js';
import { jobRequest } from '../helpers/jobs.js';
import { StaleIncarnationError } from '../../src/errors/stale-incarnation-error.js';
import type { Db } from '../../src/store/db.js';
import { CHANNELS } from '../../src/store/channels.js';

const logger = pino({ level: 'silent' });
let t: TestDatabase;
let lease: Lease;

beforeAll(async () => {
  t = await freshDatabase('node_health');
  lease = new Lease({
    databaseUrl: t.url,
    replica: 'test',
    leaseMs: 2000,
    renewMs: 667,
    standbyPollMs: 50,
    silentMs: DEFAULT_TIMINGS.deadAfterSilentMs,
    logger,
  });
  const elected = new Promise<void>((resolve) => lease.once('elected', () => resolve()));
  lease.start();
  await elected;
});

afterAll(async () => {
  await lease.stop();
  await t.close();
});

beforeEach(async () => {
  await t.db.query('DELETE FROM assignments');
  await t.db.query('DELETE FROM nodes');
  for (const name of ['n1', 'n2', 'n3', 'n4']) {
    await registerNode(t.db, name, 4000, 8 * 1024 ** 3, {});
    await openWatch(t.db, name, randomUUID(), 'test');
  }
  // This leader has been in office long enough for silence to count, and took over at once.
  await t.db.query("UPDATE lease SET grace_from = now() - interval '1 minute', lapse = interval '0'");
});

async function silence(names: string[]): Promise<void> {
  await t.db.query("UPDATE node_heartbeats SET at = now() - interval '10 seconds' WHERE name = ANY($1)", [names]);
}

async function dead(): Promise<string[]> {
  return (await t.db.query<{ name: string }>("SELECT name FROM nodes WHERE state = 'Dead' ORDER BY name")).rows.map(
    (r) => r.name,
  );
}

const RULE = deathRule(DEFAULT_TIMINGS); // dead after 5 s silent, or 1 s disconnected with 1.5 s quiet
const health = (holdMs: number) => new NodeHealth(t.db, lease, 100, RULE, { quietAfterMs: 2000, holdMs });

/** The node's watch closed `closedMs` ago; its last heartbeat was `beatMs` ago. */
async function disconnect(name: string, closedMs: number, beatMs: number): Promise<void> {
  await t.db.query("UPDATE nodes SET disconnected_at = now() - $2::int * interval '1 millisecond' WHERE name = $1", [
    name,
    closedMs,
  ]);
  await t.db.query("UPDATE node_heartbeats SET at = now() - $2::int * interval '1 millisecond' WHERE name = $1", [
    name,
    beatMs,
  ]);
}

describe('node-health', () => {
  // Broken variant (src/testing/broken-guards.ts, death-heartbeat-lock): the heartbeat is answered Ready while
  // the death commits, and the node would keep its jobs.
  it.each([false, true])(
    'answers a heartbeat that comes while the node is being declared dead with Dead, never Ready (lock broken: %s)',
    async (broken) => {
      await silence(['n2']);
      if (broken) process.env.FENCER_BREAK_GUARDS = 'death-heartbeat-lock';
      const tx = await t.db.connect();
      try {
        await tx.query('BEGIN');
        expect(await declareNodeDead(tx, 'n2', RULE, 'test')).not.toBeNull();
        const beat = heartbeat(t.db, 'n2');
        if (broken) {
          expect(await beat).toBe('Ready');
          await tx.query('COMMIT');
          return;
        }
        // The death holds the heartbeat row: the heartbeat waits for it, and hears of the death.
        await eventually(
          async () =>
            ((
              await t.db.query(
                "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%fencer_heartbeat%'",
              )
            ).rowCount ?? 0) > 0,
          {
            what: 'the heartbeat to wait on its row',
          },
        );
        await tx.query('COMMIT');
        expect(await beat).toBe('Dead');
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
        tx.release();
      }
    },
  );

  it('declares one quiet node dead at once', async () => {
    await silence(['n2']);
    await health(60_000).reconcile(logger);
    expect(await dead()).toEqual(['n2']);
  });

  it('declares a node cut off for longer than twice the silence timeout dead, however recently a leader was elected', async () => {
    // Leaders keep changing (each election gives every node a full timeout to be heard), but a
    // node silent for 11 s has had its grace: with an election every few seconds it would never die.
    await t.db.query("UPDATE node_heartbeats SET at = now() - interval '11 seconds' WHERE name = 'n1'");
    await t.db.query("UPDATE node_heartbeats SET at = now() - interval '6 seconds' WHERE name = 'n2'");
    // Taken over 0.1 s after the old leader's last renewal, as after a kill.
    await t.db.query("UPDATE lease SET grace_from = now() - interval '1 second', lapse = interval '0.1 seconds'");
    await health(0).reconcile(logger);
    expect(await dead()).toEqual(['n1']); // n2 still has the new leader's grace
  });

  it('never declares a node dead for the time the database was away: a new leader gives every node a full timeout', async () => {
    // PostgreSQL was away for 13 s (a Patroni failover): the old leader last renewed 14.3 s ago,
    // n1 last heartbeated 14.8 s ago, and a new leader took over 1.3 s ago, once the new primary
    // answered. The other nodes got their heartbeats in already; n1's is still on its way.
    const away = async (sinceMs: number) => {
      await t.db.query(
        "UPDATE lease SET grace_from = now() - ($1::int - 13000) * interval '1 millisecond', lapse = interval '13 seconds'",
        [sinceMs],
      );
      await t.db.query(
        "UPDATE node_heartbeats SET at = now() - ($1::int + 500) * interval '1 millisecond' WHERE name = 'n1'",
        [sinceMs],
      );
      // Its watch stream's close was recorded just before the outage too: the disconnect rule's
      // clocks, the heartbeats' quiet included, get the same grace.
      await t.db.query(
        "UPDATE nodes SET disconnected_at = now() - ($1::int + 500) * interval '1 millisecond' WHERE name = 'n1'",
        [sinceMs],
      );
    };
    await away(14_300);
    await health(0).reconcile(logger);
    expect(await dead()).toEqual([]);
    // Still silent a full timeout after the new leader took over: dead.
    await away(19_100);
    await health(0).reconcile(logger);
    expect(await dead()).toEqual(['n1']);
  });

  it('gives placement only the nodes heard from within two heartbeats (a cut-off node is no home, dead or not)', async () => {
    await t.db.query("UPDATE node_heartbeats SET at = now() - interval '3 seconds' WHERE name = 'n1'");
    const { nodes } = await readPlacementInput(t.db, 10, 2 * DEFAULT_TIMINGS.heartbeatMs);
    expect(nodes.map((n) => n.name)).toEqual(['n2', 'n3', 'n4']);
  });

  it('holds off while most nodes are quiet at once, then declares them after the hold', async () => {
    await silence(['n1', 'n2', 'n3']);
    const controller = health(1500);
    await controller.reconcile(logger);
    expect(await dead()).toEqual([]);
    await new Promise((r) => setTimeout(r, 1600));
    await controller.reconcile(logger);
    expect(await dead()).toEqual(['n1', 'n2', 'n3']);
  });

  it('declares a node dead a second after its watch closed when its heartbeats stopped too (killed)', async () => {
    await disconnect('n2', 1200, 1600);
    await health(60_000).reconcile(logger);
    expect(await dead()).toEqual(['n2']);
    const reason = (await t.db.query("SELECT dead_reason FROM nodes WHERE name = 'n2'")).rows[0].dead_reason;
    expect(reason).toMatch(/watch connection closed and not back within 1000 ms, heartbeats stopped/);
  });

  it('keeps a node that heartbeats while it reconnects its watch, until the silence timeout', async () => {
    // Its watch was on a replica that died; it has fenced itself and is opening another.
    await disconnect('n2', 2500, 900); // its last heartbeat is at most one interval (1 s) old
    await health(60_000).reconcile(logger);
    expect(await dead()).toEqual([]);
    // Still no watch after the silence timeout: no use to anyone, declared dead.
    await disconnect('n2', 5200, 900);
    await health(60_000).reconcile(logger);
    expect(await dead()).toEqual(['n2']);
  });

  it('counts half of the nodes quiet as no reason to hold off', async () => {
    await silence(['n1', 'n2']);
    await health(60_000).reconcile(logger);
    expect(await dead()).toEqual(['n1', 'n2']);
  });
});

describe('heartbeats in flight at once', () => {
  const lastBeat = async (name: string) =>
    (await t.db.query<{ at: Date }>('SELECT at FROM node_heartbeats WHERE name = $1', [name])).rows[0]!.at.getTime();

  // A node may count a heartbeat from its sending while an older one is still in flight (a late
  // answer awaited on one replica while it tries another). The older one's transaction began
  // first (its now() is fixed), was held up before it reached the heartbeat row, and commits
  // after the newer one: the row must keep the newer time, which the node counts, or the death
  // rule runs ahead of the node's self-fence.
  it.each([false, true])(
    'one that began first but commits last never moves the node’s last heartbeat back (guard broken: %s)',
    async (broken) => {
      const older = await t.db.connect();
      if (broken) process.env.FENCER_BREAK_GUARDS = 'heartbeat-forward';
      try {
        await older.query('BEGIN');
        await older.query('SELECT now()');
        await t.db.query('SELECT pg_sleep(0.05)'); // the newer one begins measurably later
        expect(await heartbeat(t.db, 'n1')).toBe('Ready');
        const newer = await lastBeat('n1');
        expect(await heartbeat(older as unknown as Db, 'n1')).toBe('Ready');
        await older.query('COMMIT');
        if (broken) expect(await lastBeat('n1')).toBeLessThan(newer);
        else expect(await lastBeat('n1')).toBe(newer);
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
        older.release();
      }
    },
  );
});

describe('registering again', () => {
  const watchOf = async (name: string) =>
    (
      await t.db.query<{ watch_session: string | null; disconnected_at: Date | null; state: string }>(
        'SELECT watch_session, disconnected_at, state FROM nodes WHERE name = $1',
        [name],
      )
    ).rows[0]!;

  it('keeps the open watch stream of the same incarnation: a late retry must not strand the node', async () => {
    // Seen in a packing run: the first registration timed out at the node but reached the
    // database after the retry had succeeded and the watch had opened. Resetting the stream
    // then left 34 of 100 nodes heartbeating, Ready and never placed on.
    const incarnation = randomUUID();
    const session = randomUUID();
    await registerNode(t.db, 'r1', 4000, 8 * 1024 ** 3, {}, incarnation);
    await openWatch(t.db, 'r1', session, 'test', 1, incarnation);
    await registerNode(t.db, 'r1', 4000, 8 * 1024 ** 3, {}, incarnation);
    expect(await watchOf('r1')).toMatchObject({ watch_session: session, disconnected_at: null, state: 'Ready' });

    // Declared dead, then registering again with its stream still open: Ready and connected.
    await t.db.query("UPDATE nodes SET state = 'Dead', dead_at = now() WHERE name = 'r1'");
    await registerNode(t.db, 'r1', 4000, 8 * 1024 ** 3, {}, incarnation);
    expect(await watchOf('r1')).toMatchObject({ watch_session: session, state: 'Ready' });

    // A stream that closed is forgotten: not connected until the node opens another (and not
    // counted as disconnected since long ago, which would get it declared dead at once).
    await closeWatch(t.db, 'r1', session);
    await registerNode(t.db, 'r1', 4000, 8 * 1024 ** 3, {}, incarnation);
    expect(await watchOf('r1')).toMatchObject({ watch_session: null, disconnected_at: null });

    // A new incarnation (the node restarted) cannot have the old stream.
    await openWatch(t.db, 'r1', session, 'test', 2, incarnation);
    await registerNode(t.db, 'r1', 4000, 8 * 1024 ** 3, {}, randomUUID());
    expect(await watchOf('r1')).toMatchObject({ watch_session: null, disconnected_at: null });
  });

  // Lag is not loss: a run past its end with no report from its live node is a question to the
  // node (a snapshot sent now; it says again how the run ended), never a failure, and never placed
  // again while its node may still run it. Broken variant (src/testing/broken-guards.ts, not-reported-is-loss):
  // the run is ended Lost and retried using an attempt, although its node may report it yet.
  it.each([false, true])(
    'job-reconcile asks a live node about a run past its end with no report, and leaves it running (guard broken: %s)',
    async (broken) => {
      const SLACK_MS = 10_000;
      const placed: string[] = [];
      for (const name of ['overdue', 'on-time']) {
        const uid = (await submitJob(t.db, jobRequest(`${name}-${randomUUID().slice(0, 6)}`))).job.uid;
        await fenced(t.db, lease, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'n1' }]));
        const id = (await t.db.query<{ id: string }>('SELECT id FROM assignments WHERE job_uid = $1', [uid])).rows[0]!
          .id;
        expect(await applyReports(t.db, 'n1', [{ kind: 'started', id }])).toEqual(['ok']);
        placed.push(uid);
      }
      // Claimed 12 s ago, 1 s long: past the slack. The other was claimed 5 s ago: it may still run.
      await t.db.query("UPDATE assignments SET started_at = now() - interval '12 seconds' WHERE job_uid = $1", [
        placed[0],
      ]);
      await t.db.query("UPDATE assignments SET started_at = now() - interval '5 seconds' WHERE job_uid = $1", [
        placed[1],
      ]);
      const asked: string[] = [];
      const listener = await t.db.connect();
      listener.on('notification', (n) => asked.push(n.payload ?? ''));
      await listener.query(`LISTEN ${CHANNELS.assignments}`);
      if (broken) process.env.FENCER_BREAK_GUARDS = 'not-reported-is-loss';
      try {
        await new JobReconcile(
          t.db,
          lease,
          100,
          { confirmTimeoutMs: 60_000, undeliveredMs: 600_000 },
          SLACK_MS,
        ).reconcile(logger);
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
      }
      const state = async (uid: string) =>
        (
          await t.db.query(
            'SELECT j.phase, j.attempt, j.reason, a.state FROM jobs j JOIN assignments a ON a.job_uid = j.uid WHERE j.uid = $1',
            [uid],
          )
        ).rows[0];
      try {
        if (broken) {
          expect(await state(placed[0]!)).toMatchObject({
            phase: 'Pending',
            attempt: 2,
            reason: 'NotReported',
            state: 'Lost',
          });
        } else {
          expect(await state(placed[0]!)).toMatchObject({ phase: 'Running', attempt: 1, state: 'Running' });
          await eventually(() => asked.includes('n1'), { what: 'n1 to be asked (sent a snapshot)' });
        }
        expect(await state(placed[1]!)).toMatchObject({ phase: 'Running', attempt: 1, state: 'Running' });
      } finally {
        listener.release();
      }
      // The late report, when it comes, ends the run as the node says (the broken variant has placed it again by then).
      const first = (
        await t.db.query<{ id: string }>('SELECT id FROM assignments WHERE job_uid = $1 ORDER BY created_at LIMIT 1', [
          placed[0],
        ])
      ).rows[0]!.id;
      await applyReports(t.db, 'n1', [{ kind: 'finished', id: first, outcome: 'Succeeded', message: null }]);
      if (!broken)
        expect(await state(placed[0]!)).toMatchObject({ phase: 'Succeeded', attempt: 1, state: 'Succeeded' });
    },
  );

  it('job-reconcile takes a run its live node never answers about for lost to the node: a disruption, no attempt used', async () => {
    const uid = (await submitJob(t.db, jobRequest(`forgotten-${randomUUID().slice(0, 6)}`))).job.uid;
    await fenced(t.db, lease, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'n1' }]));
    const id = (await t.db.query<{ id: string }>('SELECT id FROM assignments WHERE job_uid = $1', [uid])).rows[0]!.id;
    expect(await applyReports(t.db, 'n1', [{ kind: 'started', id }])).toEqual(['ok']);
    await t.db.query("UPDATE assignments SET started_at = now() - interval '12 seconds' WHERE id = $1", [id]);
    // Asked at once, and left unanswered for no time at all: the second pass gives up on the node.
    const reconcile = new JobReconcile(
      t.db,
      lease,
      100,
      { confirmTimeoutMs: 60_000, undeliveredMs: 600_000 },
      10_000,
      1000,
      0,
    );
    await reconcile.reconcile(logger);
    const state = async () =>
      (
        await t.db.query(
          'SELECT j.phase, j.attempt, j.disruptions, j.reason, a.state FROM jobs j JOIN assignments a ON a.id = $2 WHERE j.uid = $1',
          [uid, id],
        )
      ).rows[0];
    expect(await state()).toMatchObject({ phase: 'Running', state: 'Running' });
    await reconcile.reconcile(logger);
    expect(await state()).toMatchObject({
      phase: 'Pending',
      attempt: 1,
      disruptions: 1,
      reason: 'NotReported',
      state: 'Lost',
    });
  });

  // Broken variant (src/testing/broken-guards.ts, registration-generation): the late registration ends what the newer process runs.
  it.each([false, true])(
    'refuses a late registration from an older process of the node: what the newer one runs goes on (check broken: %s)',
    async (broken) => {
      const [older, newer] = [randomUUID(), randomUUID()];
      await registerNode(t.db, 'n1', 4000, 8 * 1024 ** 3, {}, older, 1);
      await registerNode(t.db, 'n1', 4000, 8 * 1024 ** 3, {}, newer, 2); // the node restarted
      await openWatch(t.db, 'n1', randomUUID(), 'test', 1, newer);
      const uid = (await submitJob(t.db, jobRequest(`runs-on-${randomUUID().slice(0, 6)}`))).job.uid;
      await fenced(t.db, lease, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'n1' }]));
      const id = (await t.db.query<{ id: string }>('SELECT id FROM assignments WHERE job_uid = $1', [uid])).rows[0]!.id;
      expect(await applyReports(t.db, 'n1', [{ kind: 'started', id }])).toEqual(['ok']);
      // The older process's registration, sent before it died, reaches a replica only now.
      if (broken) {
        process.env.FENCER_BREAK_GUARDS = 'registration-generation';
        try {
          await registerNode(t.db, 'n1', 4000, 8 * 1024 ** 3, {}, older, 1);
        } finally {
          delete process.env.FENCER_BREAK_GUARDS;
        }
        expect((await t.db.query('SELECT state FROM assignments WHERE id = $1', [id])).rows[0].state).toBe('Lost');
        return;
      }
      await expect(registerNode(t.db, 'n1', 4000, 8 * 1024 ** 3, {}, older, 1)).rejects.toThrow(StaleIncarnationError);
      expect((await t.db.query('SELECT state FROM assignments WHERE id = $1', [id])).rows[0].state).toBe('Running');
      expect(
        (await t.db.query("SELECT incarnation, watch_session IS NOT NULL AS watching FROM nodes WHERE name = 'n1'"))
          .rows[0],
      ).toEqual({ incarnation: newer, watching: true });
    },
  );
});
