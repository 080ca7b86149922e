// The lease and the fence, in one process against a real PostgreSQL. Each guard test also runs
// with the guard broken (FENCER_BREAK_GUARDS) and shows the bad outcome then happens.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { Lease } from '../../src/lease/lease.js';
import { fenced } from '../../src/lease/fenced.js';
import { LeaseLostError } from '../../src/errors/lease-lost-error.js';
import { createPool } from '../../src/store/db.js';

const logger = pino({ level: 'silent' });
let t: TestDatabase;
const leases: Lease[] = [];

function lease(replica: string, leaseMs = 1000, silentMs = 5000): Lease {
  const l = new Lease({
    databaseUrl: t.url,
    replica,
    leaseMs,
    renewMs: Math.round(leaseMs / 3),
    standbyPollMs: 25,
    silentMs,
    logger,
  });
  leases.push(l);
  l.start();
  return l;
}

async function leaseRow() {
  return (await t.db.query<{ holder: string | null; epoch: number }>('SELECT holder, epoch FROM lease')).rows[0]!;
}

beforeAll(async () => {
  t = await freshDatabase('fence');
  await t.db.query('CREATE TABLE decisions (epoch bigint, what text)');
});
afterEach(async () => {
  await Promise.all(leases.splice(0).map((l) => l.stop()));
  delete process.env.FENCER_BREAK_GUARDS;
});
afterAll(() => t.close());

describe('lease', () => {
  it('elects one leader, bumps the epoch at every acquisition, and hands over on step-down', async () => {
    const before = (await leaseRow()).epoch;
    const a = lease('a');
    await eventually(() => a.isLeader(), { what: 'a to lead' });
    const b = lease('b');
    const c = lease('c');
    // Every election of b or c is counted, over the whole time a leads (not one sampled moment):
    // they poll every 50 ms, so 300 ms gives each a few tries to take a lease that is not free.
    const elected: string[] = [];
    b.on('elected', () => elected.push('b'));
    c.on('elected', () => elected.push('c'));
    await new Promise((r) => setTimeout(r, 300));
    expect(elected).toEqual([]);
    expect(a.epoch()).toBe(before + 1);

    await a.stop();
    const next = await eventually(() => [b, c].find((l) => l.isLeader()), { what: 'a new leader' });
    expect(elected).toHaveLength(1);
    expect(next.epoch()).toBe(before + 2);
    expect((await leaseRow()).epoch).toBe(before + 2); // no acquisition in between, by anyone
  });

  it('a standby takes over from a leader whose connection died, before the lease expires', async () => {
    const a = lease('a', 10_000);
    await eventually(() => a.isLeader());
    const epoch = a.epoch()!;
    const b = lease('b', 10_000);
    // End a's lease session from the database side: its liveness lock goes with it.
    await t.db.query(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 7310002 AND objid = $1 AND granted",
      [epoch],
    );
    const started = Date.now();
    const next = await eventually(() => [a, b].find((l) => l.epoch() === epoch + 1), {
      what: 'a leader at the next epoch',
      timeoutMs: 5000,
    });
    expect(Date.now() - started).toBeLessThan(5000); // far below the 10 s lease
    expect(next.epoch()).toBe(epoch + 1);
  });
});

/** The death rule's grace as the lease row keeps it (migration 0031), in ms. */
async function grace(): Promise<{ age: number; lapse: number }> {
  return (
    await t.db.query<{ age: number; lapse: number }>(
      'SELECT (extract(epoch FROM now() - grace_from) * 1000)::float8 AS age, (extract(epoch FROM lapse) * 1000)::float8 AS lapse FROM lease',
    )
  ).rows[0]!;
}

describe("the death rule's grace, as the lease keeps it", () => {
  it('an outage is a lapse, kept through a second election right after it, and forgotten once a leader was heard for a full silence timeout', async () => {
    // The database was away 14 s: the last holder renewed 14 s ago and nobody took over since.
    await t.db.query(
      "UPDATE lease SET holder = 'gone', expires_at = now() - interval '12 seconds', renewed_at = now() - interval '14 seconds', grace_from = now() - interval '1 minute', lapse = interval '0'",
    );
    const a = lease('a', 1000, 1500);
    await eventually(() => a.isLeader(), { what: 'a to lead' });
    expect((await grace()).lapse).toBeGreaterThanOrEqual(14_000);
    // a is gone at once (stepped down, or killed): b's own lapse is short, the outage's is kept.
    await a.stop();
    const b = lease('b', 1000, 1500);
    await eventually(() => b.isLeader(), { what: 'b to lead' });
    expect((await grace()).lapse).toBeGreaterThanOrEqual(14_000);
    // b heard for more than the silence timeout (1.5 s here) in a row: the next election starts afresh.
    await eventually(
      async () =>
        (
          await t.db.query<{ heard: boolean }>(
            "SELECT renewed_at - grace_from > interval '1.5 seconds' AS heard FROM lease",
          )
        ).rows[0]!.heard,
      { what: 'b to be heard for 1.5 s', timeoutMs: 5000 },
    );
    await b.stop();
    const c = lease('c', 1000, 1500);
    await eventually(() => c.isLeader(), { what: 'c to lead' });
    expect((await grace()).lapse).toBeLessThan(1000);
  });

  it('a renewal after more than a lease without one (the database stalled, nobody took over) starts the grace again', async () => {
    const a = lease('a', 1000);
    await eventually(() => a.isLeader(), { what: 'a to lead' });
    // Heard for long: nothing carried. Then its renewals stop reaching the database for 3 s.
    await t.db.query("UPDATE lease SET grace_from = now() - interval '1 minute', lapse = interval '0'");
    await t.db.query("UPDATE lease SET renewed_at = now() - interval '3 seconds'");
    await eventually(async () => (await grace()).age < 1000, { what: "a's renewal to start the grace again" });
    const after = await grace();
    expect(after.lapse).toBeGreaterThanOrEqual(3000);
    expect(a.epoch()).not.toBeNull(); // the same holder: no election was needed for it
    // A stall soon after a longer lapse (a holder not yet heard for a full timeout): the longer one is kept.
    await t.db.query("UPDATE lease SET grace_from = now() - interval '1 second', lapse = interval '20 seconds'");
    await t.db.query("UPDATE lease SET renewed_at = now() - interval '3 seconds'");
    await eventually(async () => (await grace()).age < 900, { what: "a's renewal to start the grace again" });
    expect((await grace()).lapse).toBeGreaterThanOrEqual(20_000);
  });
});

describe('the lease across a jump of the database clock (a new primary whose clock runs ahead)', () => {
  it('a standby takes the lease at the next epoch while the old leader still trusts its own; the old one cannot decide, and no epoch goes backwards', async () => {
    const a = lease('a', 10_000);
    await eventually(() => a.isLeader(), { what: 'a to lead' });
    const epochA = a.epoch()!;
    const b = lease('b', 10_000);
    // now() 20 s ahead of the clock the lease was written by, as on a promoted member whose clock
    // is ahead: the row's times 20 s back is the same jump, seen from the row.
    const jump = () =>
      t.db.query(
        "UPDATE lease SET expires_at = expires_at - interval '20 seconds', renewed_at = renewed_at - interval '20 seconds', acquired_at = acquired_at - interval '20 seconds', grace_from = grace_from - interval '20 seconds' WHERE epoch = $1",
        [epochA],
      );
    await jump();
    await eventually(async () => b.epoch() === epochA + 1 || (await jump(), false), {
      what: 'b to take the lease at the next epoch',
    });
    // a's trust window runs on its own monotonic clock: it still believes it leads.
    expect(a.isLeader()).toBe(true);
    await expect(
      fenced(t.db, a, (tx, epoch) => tx.query("INSERT INTO decisions VALUES ($1, 'jumped-old')", [epoch])),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await fenced(t.db, b, (tx, epoch) => tx.query("INSERT INTO decisions VALUES ($1, 'jumped-new')", [epoch]));
    // a's next renewal finds the lease taken: it steps down, and bumps nothing.
    await eventually(() => !a.isLeader(), { what: 'a to step down', timeoutMs: 10_000 });
    expect((await leaseRow()).epoch).toBe(epochA + 1);
    const written = (
      await t.db.query<{ what: string; epoch: number }>(
        "SELECT what, epoch::int FROM decisions WHERE what LIKE 'jumped-%' ORDER BY what",
      )
    ).rows;
    expect(written).toEqual([{ what: 'jumped-new', epoch: epochA + 1 }]);
  });
});

describe.each([
  { guard: 'intact', broken: false },
  { guard: 'broken', broken: true },
])('the fence ($guard)', ({ broken }) => {
  it(
    broken
      ? 'lets a deposed leader write (showing the guard is what stops it)'
      : 'rejects a write from a deposed leader',
    async () => {
      if (broken) process.env.FENCER_BREAK_GUARDS = 'fence';
      const current = lease('current');
      await eventually(() => current.isLeader());
      const stale = { epoch: () => current.epoch()! - 1 }; // what a frozen, replaced leader believes
      const attempt = fenced(t.db, stale, (tx, epoch) =>
        tx.query("INSERT INTO decisions VALUES ($1, 'stale')", [epoch]),
      );
      if (broken) {
        await attempt;
      } else {
        await expect(attempt).rejects.toBeInstanceOf(LeaseLostError);
      }
      const written = (await t.db.query("SELECT count(*)::int AS n FROM decisions WHERE what = 'stale'")).rows[0].n;
      expect(written > 0).toBe(broken);
      await t.db.query('DELETE FROM decisions');
    },
  );
});

describe.each([
  { guard: 'intact', broken: false },
  { guard: 'broken', broken: true },
])('a leader frozen inside a fenced transaction (idle-in-transaction timeout $guard)', ({ broken }) => {
  it(
    broken
      ? 'blocks the takeover while it is frozen'
      : 'is replaced while frozen, and its write is rejected when it wakes',
    async () => {
      const decisions = createPool({ databaseUrl: t.url, replica: 'a', idleInTxTimeoutMs: broken ? undefined : 300 });
      const a = lease('a', 1000);
      await eventually(() => a.isLeader());
      const epochA = a.epoch()!;
      let frozen!: () => void;
      const wake = new Promise<void>((r) => (frozen = r));
      let inside!: () => void;
      const isInside = new Promise<void>((r) => (inside = r));
      const write = fenced(decisions, a, async (tx, epoch) => {
        inside();
        await wake; // frozen mid-decision, holding the lease row FOR SHARE
        await tx.query("INSERT INTO decisions VALUES ($1, 'frozen')", [epoch]);
      });
      write.catch(() => {});
      await isInside;
      await a.stop(); // the frozen leader renews no more (its release waits behind its own share lock)
      const b = lease('b', 1000);
      const tookOver = await eventually(() => b.isLeader(), { timeoutMs: 4000 }).then(
        () => true,
        () => false,
      );
      frozen();
      const outcome = await write.then(
        () => 'committed',
        () => 'rejected',
      );
      if (broken) {
        expect(tookOver).toBe(false);
      } else {
        expect(tookOver).toBe(true);
        expect(b.epoch()).toBeGreaterThan(epochA);
        expect(outcome).toBe('rejected');
        const written = (await t.db.query("SELECT count(*)::int AS n FROM decisions WHERE what = 'frozen'")).rows[0].n;
        expect(written).toBe(0);
      }
      await decisions.end();
    },
  );
});
