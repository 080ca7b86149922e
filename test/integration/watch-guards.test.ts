// The watch feed's order guard (src/store/sql/watch/*.sql): an event is streamed, and a list's
// resourceVersion covers it, only once every transaction with a smaller xid has ended. Without it
// (guard watch-xmin broken) this interleaving loses an event for good:
//   1. transaction A changes job x (event e1, xid a) and stays open;
//   2. transaction B changes job y (event e2, xid b > a) and commits;
//   3. a watch reads on and passes e2 (or a list is read at resourceVersion e2);
//   4. A commits: e1 sorts before e2, behind the point the watch resumes from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobRequest } from '../helpers/jobs.js';
import { submitJob } from '../../src/store/jobs.js';
import {
  eventsAfter,
  listVersion,
  positionOf,
  type WatchEvent,
  type WatchPosition,
} from '../../src/store/watch-feed.js';

let t: TestDatabase;
let a: pg.Client;

beforeAll(async () => {
  t = await freshDatabase('watch-guards');
  a = new pg.Client({ connectionString: t.url });
  await a.connect();
});

afterAll(async () => {
  await a.end().catch(() => {});
  await t.close();
});

async function withGuard<T>(broken: boolean, fn: () => Promise<T>): Promise<T> {
  if (broken) process.env.FENCER_BREAK_GUARDS = 'watch-xmin';
  try {
    return await fn();
  } finally {
    delete process.env.FENCER_BREAK_GUARDS;
  }
}

/**
 * Every event after `from` a watch reads now, and where it then stands. Guarded, it may read
 * fewer than have committed: the server's other databases' transactions (the suite's other
 * files) hold the xmin back too, so the tests wait for what they expect.
 */
async function readOn(from: WatchPosition, broken: boolean): Promise<{ events: WatchEvent[]; at: WatchPosition }> {
  const events = await withGuard(broken, () => eventsAfter(t.db, from, 1000));
  const last = events.at(-1);
  return { events, at: last ? { xid: last.xid, id: Number(last.id) } : from };
}

/** Steps 1 and 2: A open with its change of x, B's change of y committed. */
async function interleave(x: string, y: string): Promise<void> {
  await a.query('BEGIN');
  await a.query('UPDATE jobs SET labels = \'{"step": "a"}\' WHERE name = $1', [x]);
  await t.db.query('UPDATE jobs SET labels = \'{"step": "b"}\' WHERE name = $1', [y]);
}

describe.each([false, true])('watch order guard (broken: %s)', (broken) => {
  it('a watch that read past a later transaction still gets the change of an earlier one that committed after', async () => {
    const [x, y] = [`x-w-${broken}`, `y-w-${broken}`];
    for (const name of [x, y]) await submitJob(t.db, jobRequest(name));
    let at = (await readOn({ xid: '0', id: 0 }, broken)).at;
    await interleave(x, y);
    const before = await readOn(at, broken);
    at = before.at;
    await a.query('COMMIT');
    if (broken) {
      const after = await readOn(at, broken);
      const seen = [...before.events, ...after.events]
        .filter((e) => e.type === 'MODIFIED' && (e.name === x || e.name === y))
        .map((e) => e.name);
      expect(seen).toEqual([y]); // x's change is behind the position: lost
      return;
    }
    expect(before.events.filter((e) => e.type === 'MODIFIED' && (e.name === x || e.name === y))).toEqual([]); // nothing streams while A may still come before B
    const seen: string[] = [];
    await eventually(
      async () => {
        const next = await readOn(at, broken);
        at = next.at;
        seen.push(
          ...next.events.filter((e) => e.type === 'MODIFIED' && (e.name === x || e.name === y)).map((e) => e.name),
        );
        return seen.length >= 2;
      },
      { what: 'both changes streamed' },
    );
    expect(seen).toEqual([x, y]);
  });

  it('a list read at the resourceVersion it is given misses nothing a watch from there then streams', async () => {
    const [x, y] = [`x-l-${broken}`, `y-l-${broken}`];
    for (const name of [x, y]) await submitJob(t.db, jobRequest(name));
    await readOn({ xid: '0', id: 0 }, broken);
    await interleave(x, y);
    const rv = await withGuard(broken, () => listVersion(t.db));
    const listed = (
      await t.db.query<{ labels: Record<string, string> }>('SELECT labels FROM jobs WHERE name = $1', [x])
    ).rows[0]!.labels;
    expect(listed).toEqual({}); // A's change is not in the list: a watch from rv must bring it
    await a.query('COMMIT');
    const from = await positionOf(t.db, rv);
    if (from === 'gone') throw new Error('resourceVersion gone');
    if (broken) {
      expect((await readOn(from, broken)).events.map((e) => e.name)).not.toContain(x);
      return;
    }
    let at = from;
    const streamed: string[] = [];
    await eventually(
      async () => {
        const next = await readOn(at, broken);
        at = next.at;
        streamed.push(...next.events.filter((e) => e.type === 'MODIFIED').map((e) => e.name));
        return streamed.includes(x);
      },
      { what: `the change of ${x} streamed` },
    );
  });
});
