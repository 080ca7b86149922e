// The leader's pending set (src/placement/pending-set.ts) against the database's
// truth: after every kind of change a job can go through (submitted, due later, waiting on a
// need and released, placed, cancelled, deleted, back to pending for a retry, in other queues
// and lanes, too large for any node), the set picks the jobs placement/pending.sql picks, in the
// same order. And the one way it can fall behind for good: notifications sent while its LISTEN
// connection was down are lost, so it must read everything again under the new connection
// (guard pending-set-reread, whose broken variant runs here too).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobRequest } from '../helpers/jobs.js';
import { Listener } from '../../src/store/listener.js';
import { followPending, PendingSet } from '../../src/placement/pending-set.js';
import { commitPlacements, LEAST_SLICE, readPlacementInput, readRoundState } from '../../src/placement/store.js';
import { cancelJob, deleteJob, submitJob, submitJobs } from '../../src/store/jobs.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { fenced } from '../../src/lease/fenced.js';
import type { JobRequest } from '../../src/domain/resources.js';

const LIMIT = 1200; // small enough that the big queue fills its slice: `full` is compared too
const FRESH_MS = 3_600_000;
let t: TestDatabase;
let listener: Listener;
const lease = { epoch: () => 7 };

beforeAll(async () => {
  t = await freshDatabase('pending-set');
  await t.db.query("UPDATE lease SET holder = 'test', epoch = 7, expires_at = now() + interval '1 hour'");
  await registerNode(t.db, 'n1', 64_000, 256 * 1024 ** 3, {});
  await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
  await t.db.query(
    "INSERT INTO node_heartbeats (name, at) VALUES ('n1', now()) ON CONFLICT (name) DO UPDATE SET at = now()",
  );
  listener = new Listener(t.url, 'test', pino({ level: 'silent' }));
  listener.start();
  await eventually(() => listener.listening !== null, { what: 'LISTEN' });
});

afterAll(async () => {
  await listener.stop();
  await t.close();
});

function job(name: string, extra: Partial<JobRequest> = {}): JobRequest {
  return { ...jobRequest(name), ...extra };
}

/** The set, fed by the listener, as placement keeps it. */
function followedSet(): PendingSet {
  const set = new PendingSet(() => listener.listening);
  followPending(set, listener, () => undefined);
  return set;
}

/** What the set picks now, and what placement/pending.sql picks. */
async function both(
  set: PendingSet,
): Promise<{ fromSet: { uids: string[]; full: boolean }; fromSql: { uids: string[]; full: boolean } }> {
  const state = await readRoundState(t.db, FRESH_MS);
  expect(await set.sync(t.db)).toBe(true);
  const picked = set.select(LIMIT, LEAST_SLICE, state.room, new Set(state.queues.map((q) => q.key)));
  const truth = await readPlacementInput(t.db, LIMIT, FRESH_MS);
  return {
    fromSet: { uids: picked.jobs.map((j) => j.uid), full: picked.full },
    fromSql: { uids: truth.jobs.map((j) => j.uid), full: truth.full },
  };
}

async function agrees(set: PendingSet, what: string): Promise<void> {
  await eventually(
    async () => {
      const { fromSet, fromSql } = await both(set);
      expect(fromSet).toEqual(fromSql);
      return true;
    },
    { what, timeoutMs: 10_000 },
  );
}

describe('pending set', () => {
  it('picks what placement/pending.sql picks through every change a job goes through', async () => {
    const set = followedSet();
    await agrees(set, 'an empty set');
    const uid = async (request: JobRequest) => (await submitJob(t.db, request)).job.uid;
    // A flood in one queue (more than its slice), jobs in two other queues and three lanes.
    for (let i = 0; i < 3; i++) {
      const accepted = await submitJobs(
        t.db,
        Array.from({ length: 400 }, (_, k) => job(`flood-${i}-${k}`, { namespace: 'tenant-a' })),
      );
      expect(accepted.outcome).toBe('accepted');
    }
    for (const [k, priority] of [1000, 0, -1000].entries())
      await uid(job(`lane-${k}`, { namespace: 'tenant-b', priority }));
    await uid(job('other-queue', { namespace: 'tenant-c', queue: 'default' }));
    const huge = await uid(job('huge', { cpuMillis: 128_000 }));
    await agrees(set, 'after submits');

    // Due later: left out until the database's clock passes its due time.
    await uid(job('later', { startAfterMs: 1500 }));
    await agrees(set, 'with a job due later');
    await eventually(
      async () => (await t.db.query("SELECT 1 FROM jobs WHERE name = 'later' AND due_at <= now()")).rowCount,
      { what: 'the job due' },
    );
    await agrees(set, 'once the job is due');
    expect((await both(set)).fromSet.uids).toContain(
      (await t.db.query("SELECT uid FROM jobs WHERE name = 'later'")).rows[0].uid,
    );

    // Waiting on a need, then released.
    const waiting = await uid(job('waits'));
    await t.db.query('UPDATE jobs SET waiting = true WHERE uid = $1', [waiting]);
    await agrees(set, 'with a waiting job');
    await t.db.query('UPDATE jobs SET waiting = false WHERE uid = $1', [waiting]);
    await agrees(set, 'after its release');

    // Placed (the set is told), placed behind its back (another leader's round), cancelled, deleted.
    const { fromSet } = await both(set);
    const [mine, theirs] = fromSet.uids.filter((u) => u !== huge);
    await fenced(t.db, lease, (tx, epoch) =>
      commitPlacements(tx, epoch, [
        { jobUid: mine!, node: 'n1' },
        { jobUid: theirs!, node: 'n1' },
      ]),
    );
    set.removed([mine!]);
    await agrees(set, 'after placements');
    await cancelJob(t.db, 'tenant-a', 'flood-0-7', 10_000);
    await deleteJob(t.db, 'tenant-a', 'flood-0-8', 10_000);
    await agrees(set, 'after a cancel and a delete');

    // Back to pending for a retry (its assignment lost), now due at once.
    await t.db.query(
      "UPDATE jobs SET phase = 'Pending', attempt = attempt + 1, node = NULL, assignment_id = NULL WHERE uid = $1",
      [theirs],
    );
    await agrees(set, 'after a retry');
    expect((await both(set)).fromSet.uids).toContain(theirs);
    expect((await both(set)).fromSet.full).toBe(true);

    // A job whose queue no longer exists (replayed after its queue was deleted) waits, as pending.sql has it.
    await t.db.query("UPDATE jobs SET queue = 'deleted' WHERE uid = $1", [theirs]);
    await agrees(set, 'with a job of a queue that does not exist');
    expect((await both(set)).fromSet.uids).not.toContain(theirs);
  });

  it('reads everything again when more jobs were named during a full read than it keeps names for', async () => {
    // Not fed by the listener: it learns of a job only by reading everything, or by its name.
    const set = new PendingSet(() => listener.listening, 3);
    const reading = set.sync(t.db); // its first read: everything
    for (const uid of ['a', 'b', 'c', 'd']) set.named(`00000000-0000-4000-8000-00000000000${uid}`); // one too many: dropped
    await reading;
    const unseen = (await submitJob(t.db, job(`unseen-${randomUUID().slice(0, 6)}`, { namespace: 'tenant-e' }))).job
      .uid;
    const state = await readRoundState(t.db, FRESH_MS);
    expect(await set.sync(t.db)).toBe(true);
    expect(
      set.select(LIMIT, LEAST_SLICE, state.room, new Set(state.queues.map((q) => q.key))).jobs.map((j) => j.uid),
    ).toContain(unseen);
  });

  it.each([false, true])(
    'reads everything again under a new LISTEN connection: nothing sent while it was down is missed (check broken: %s)',
    async (broken) => {
      const set = followedSet();
      await agrees(set, 'before the connection is lost');
      const before = listener.listening!;
      await t.db.query(
        // The listener's session: its last statement is sql/listener/listen.sql (not this one).
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%LISTEN fencer_%' AND pid <> pg_backend_pid()",
      );
      await eventually(() => listener.listening === null, { what: 'the LISTEN connection lost' });
      const missed = (
        await submitJob(t.db, job(`while-down-${broken}-${randomUUID().slice(0, 6)}`, { namespace: 'tenant-d' }))
      ).job.uid;
      await eventually(() => (listener.listening ?? 0) > before, { what: 'LISTEN again' });
      if (broken) process.env.FENCER_BREAK_GUARDS = 'pending-set-reread';
      try {
        const { fromSet, fromSql } = await both(set);
        expect(fromSql.uids).toContain(missed);
        if (broken)
          expect(fromSet.uids).not.toContain(missed); // left behind until the next full read
        else expect(fromSet).toEqual(fromSql);
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
      }
    },
  );

  it.each([false, true])(
    'reads a job again when it left the pending ones while the set was reading it (check broken: %s)',
    async (broken) => {
      const set = followedSet();
      await agrees(set, 'before');
      const name = `left-${broken}-${randomUUID().slice(0, 6)}`;
      // Every uid each event named from now on: a notification may come before submitJob returns.
      const heard = (event: 'pending' | 'left') => {
        const seen = new Set<string>();
        const waiting = new Map<string, () => void>();
        listener.on(event, (uids) => {
          for (const u of uids) {
            seen.add(u);
            waiting.get(u)?.();
          }
        });
        return (u: string) => new Promise<void>((resolve) => (seen.has(u) ? resolve() : waiting.set(u, resolve)));
      };
      const named = heard('pending');
      const left = heard('left');
      const uid = (await submitJob(t.db, job(name, { namespace: 'tenant-f' }))).job.uid;
      await named(uid);
      // The read sees the job pending; its answer is held until the cancel's notification is heard.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const slow = {
        connect: () => t.db.connect(),
        query: async (text: string, values?: unknown[]) => {
          const result = await t.db.query(text, values);
          await held;
          return result;
        },
      } as unknown as typeof t.db;
      if (broken) process.env.FENCER_BREAK_GUARDS = 'pending-left-reread';
      try {
        const reading = set.sync(slow);
        await cancelJob(t.db, 'tenant-f', name, 10_000);
        await left(uid);
        release();
        expect(await reading).toBe(true);
        const state = await readRoundState(t.db, FRESH_MS);
        expect(await set.sync(t.db)).toBe(true);
        const picked = set.select(LIMIT, LEAST_SLICE, state.room, new Set(state.queues.map((q) => q.key)));
        if (broken)
          expect(picked.jobs.map((j) => j.uid)).toContain(uid); // stale until the next full read
        else expect(picked.jobs.map((j) => j.uid)).not.toContain(uid);
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
      }
    },
  );
});
