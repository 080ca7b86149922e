// The Events watch's cursor against PostgreSQL (src/api/kube/events/low-water.ts): a row whose
// transaction took a lower id and commits after a higher one's is still streamed, in both
// tables. Two variants that lose it, from the same interleaving:
//   1. transaction A takes an id (a history row, a cluster event) and stays open;
//   2. transaction B takes a higher id and commits; the watch streams B;
//   3. A commits: the watch must still stream A.
// - going on from the highest id seen: after B it reads only ids above B's;
// - bounding with pg_snapshot_xmax instead of an xid taken after the sequence is read: xmax is
//   one past the latest *completed* xid, so A (the newest xid, still running) is neither below
//   it nor in the snapshot, and the oldest running xid reaches that bound while A runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobRequest } from '../helpers/jobs.js';
import { submitJob } from '../../src/store/jobs.js';
import { sql } from '../../src/store/sql.js';
import type { Db } from '../../src/store/db.js';
import { recordClusterEvent } from '../../src/store/cluster-events.js';
import { historyAfter, lastEventIds, oldestRunning } from '../../src/store/events.js';
import { cursorAt, readOn, type EventCursor } from '../../src/api/kube/events/feed.js';
import { afterPoll, lowWaterAt, withBound, type LowWater } from '../../src/api/kube/events/low-water.js';

let t: TestDatabase;
let a: pg.Client;

beforeAll(async () => {
  t = await freshDatabase('kube-events-low-water');
  a = new pg.Client({ connectionString: t.url });
  await a.connect();
});

afterAll(async () => {
  await a.end().catch(() => {});
  await t.close();
});

/** A job's phase change: a history row (trigger jobs_history), in the session that runs it. */
async function cancel(session: pg.Client | Db, name: string): Promise<void> {
  await session.query("UPDATE jobs SET phase = 'Cancelled', reason = 'Cancelled' WHERE name = $1", [name]);
}

const rejection = (object: string) => ({
  type: 'Warning' as const,
  reason: 'FencedRejection',
  object,
  epoch: 1,
  replica: 'replica-t',
  message: 'test',
});

/** Job names (history) or objects (cluster events) of the rows a poll streamed. */
async function poll(cursor: EventCursor): Promise<{ cursor: EventCursor; names: string[] }> {
  const read = await readOn(t.db, cursor, 100);
  return {
    cursor: read.cursor,
    names: [...read.history.map((r) => r.job.split('/')[1]!), ...read.cluster.map((r) => r.object)],
  };
}

describe('the events cursor (low-water)', () => {
  it('streams a history row and a cluster event that commit after higher ones', async () => {
    for (const name of ['x', 'y']) await submitJob(t.db, jobRequest(name));
    let cursor = cursorAt(await lastEventIds(t.db));
    ({ cursor } = await poll(cursor)); // a bound out, as a running watch has

    await a.query('BEGIN');
    await cancel(a, 'x');
    // As recordClusterEvent writes one, in A: the xid first (A has it already), then the row.
    const { type, reason, object, epoch, replica, message } = rejection('replica/a');
    await a.query(sql('cluster_events/take_xid'));
    await a.query(sql('cluster_events/insert'), [type, reason, object, epoch, replica, message]);
    await cancel(t.db, 'y');
    await recordClusterEvent(t.db, rejection('replica/b'));

    const seen: string[] = [];
    await eventually(
      async () => {
        const next = await poll(cursor);
        cursor = next.cursor;
        seen.push(...next.names);
        return seen.length >= 2;
      },
      { what: "B's rows streamed while A is open" },
    );
    expect(seen.sort()).toEqual(['replica/b', 'y']);

    await a.query('COMMIT');
    await eventually(
      async () => {
        const next = await poll(cursor);
        cursor = next.cursor;
        seen.push(...next.names);
        return seen.length >= 4;
      },
      { what: "A's rows streamed once A committed" },
    );
    expect(seen.slice(2).sort()).toEqual(['replica/a', 'x']);
    // Once settled, the low-water has passed all four, and nothing streams twice.
    await eventually(
      async () => {
        const next = await poll(cursor);
        cursor = next.cursor;
        seen.push(...next.names);
        return cursor.history.streamed.size === 0 && cursor.cluster.streamed.size === 0;
      },
      { what: 'the low-water past every row' },
    );
    expect(seen).toHaveLength(4);
  });

  // The variants, written here: each polls as readOn does, with one step changed.
  type Variant = (state: LowWater) => Promise<{ state: LowWater; ids: number[] }>;

  const highestSeen: Variant = async (state) => {
    const ids = (await historyAfter(t.db, state.low, [], 100)).map((r) => r.id);
    return { state: { ...state, low: Math.max(state.low, ...ids) }, ids };
  };

  const xmaxBound: Variant = async (state) => {
    const oldest = state.bound ? await oldestRunning(t.db) : null;
    const ids = (await historyAfter(t.db, state.low, [...state.streamed], 100)).map((r) => r.id);
    const next = afterPoll(state, { oldestRunning: oldest, ids, full: false });
    if (next.state.bound) return { state: next.state, ids: next.fresh };
    const lastId = (await lastEventIds(t.db)).history;
    const xmax = BigInt(
      (await t.db.query<{ xmax: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax')).rows[0]!
        .xmax,
    );
    return { state: withBound(next.state, { lastId, barrier: xmax }), ids: next.fresh };
  };

  it.each([
    ['going on from the highest id seen', 'highest', highestSeen],
    ['bounding with pg_snapshot_xmax', 'xmax', xmaxBound],
  ] as const)('broken variant (%s) loses the row that commits late', async (_what, label, variant) => {
    const [x, y] = [`x-${label}`, `y-${label}`];
    for (const name of [x, y]) await submitJob(t.db, jobRequest(name));
    let state = lowWaterAt((await lastEventIds(t.db)).history);
    ({ state } = await variant(state));

    await a.query('BEGIN');
    await cancel(a, x); // A: the newest xid, and it stays open
    const idOfA = (await lastEventIds(t.db)).history;
    ({ state } = await variant(state)); // the xmax variant sets out its bound now, with A running
    await cancel(t.db, y); // B commits
    const streamed: number[] = [];
    for (let i = 0; i < 3; i++) streamed.push(...(await variant(state).then((r) => ((state = r.state), r.ids))));
    expect(streamed).toEqual([idOfA + 1]); // B
    expect(state.low).toBeGreaterThanOrEqual(idOfA); // passed A while A runs
    await a.query('COMMIT');
    for (let i = 0; i < 3; i++) streamed.push(...(await variant(state).then((r) => ((state = r.state), r.ids))));
    expect(streamed).toEqual([idOfA + 1]); // A's row is behind the low-water: lost
    expect((await historyAfter(t.db, idOfA - 1, [], 1)).map((r) => r.id)).toEqual([idOfA]); // though it committed
  });

  it('the same interleaving, with the cursor a watch uses: nothing lost', async () => {
    const [x, y] = ['x-cursor', 'y-cursor'];
    for (const name of [x, y]) await submitJob(t.db, jobRequest(name));
    let cursor = cursorAt(await lastEventIds(t.db));
    ({ cursor } = await poll(cursor));
    await a.query('BEGIN');
    await cancel(a, x);
    ({ cursor } = await poll(cursor));
    await cancel(t.db, y);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push(...(await poll(cursor).then((r) => ((cursor = r.cursor), r.names))));
    expect(seen).toEqual([y]);
    await a.query('COMMIT');
    await eventually(
      async () => {
        const next = await poll(cursor);
        cursor = next.cursor;
        seen.push(...next.names);
        return seen.length >= 2;
      },
      { what: "A's row" },
    );
    expect(seen).toEqual([y, x]);
  });
});
