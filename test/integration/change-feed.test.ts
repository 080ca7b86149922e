// The dashboard's change feed against a real PostgreSQL: what a page is told, in what order.
// The first thing after subscribing is "everything" (only once the feed knows where it reads on
// from, so a page that read before misses nothing); then each kind of change, once committed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { ChangeFeed } from '../../src/api/change-feed.js';
import type { Change } from '../../src/domain/change.js';
import { submitJob } from '../../src/store/jobs.js';
import { recordClusterEvent } from '../../src/store/cluster-events.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobRequest } from '../helpers/jobs.js';

let t: TestDatabase;
let feed: ChangeFeed;
const heard: Change[] = [];
let beats = 0;
let unsubscribe: () => void;

beforeAll(async () => {
  t = await freshDatabase('change_feed');
  feed = new ChangeFeed(t.db, 3_000, pino({ level: 'silent' }));
  unsubscribe = feed.subscribe({ change: (c) => heard.push(c), beat: () => beats++ });
});

afterAll(async () => {
  unsubscribe?.();
  await feed?.stop();
  await t?.close();
});

/** What the feed says after `act`, once it said something. */
async function after(act: () => Promise<unknown>): Promise<Change[]> {
  const from = heard.length;
  await act();
  await eventually(() => heard.length > from, { what: 'the feed to tell' });
  return heard.slice(from);
}

describe('the change feed', () => {
  it('first tells everything, then beats while nothing changes', async () => {
    await eventually(() => heard.length > 0, { what: 'the first message' });
    expect(heard[0]).toMatchObject({ all: true, status: true, events: true });
    const from = beats;
    await eventually(() => beats >= from + 3, { what: 'beats' });
    expect(heard).toHaveLength(1);
  });

  it('names the jobs that changed', async () => {
    const told = await after(() => submitJob(t.db, jobRequest('feed-1')));
    expect(told).toEqual([
      { kinds: expect.arrayContaining(['Job']), jobs: ['default/feed-1'], status: false, events: false },
    ]);
  });

  it('tells of a new epoch and its election event, and of a replica coming', async () => {
    const election = await after(() =>
      t.db.query(
        "UPDATE lease SET holder = 'replica-x', epoch = epoch + 1, acquired_at = now(), renewed_at = now(), expires_at = now() + interval '1 hour' WHERE id = 1",
      ),
    );
    expect(election).toEqual([{ kinds: [], jobs: [], status: true, events: true }]);
    const replica = await after(() =>
      t.db.query("INSERT INTO replicas (name, url) VALUES ('replica-x', 'http://127.0.0.1:1')"),
    );
    expect(replica).toEqual([{ kinds: [], jobs: [], status: true, events: false }]);
  });

  it('tells of an event a replica records, and of a node', async () => {
    const told = await after(() =>
      recordClusterEvent(t.db, {
        type: 'Warning',
        reason: 'FencedRejection',
        object: 'replica/replica-x',
        epoch: 1,
        replica: 'replica-x',
        message: 'test',
      }),
    );
    expect(told).toEqual([{ kinds: [], jobs: [], status: false, events: true }]);
    const node = await after(() =>
      t.db.query("INSERT INTO nodes (name, cpu_millis, memory_bytes) VALUES ('node-x', 1000, 1073741824)"),
    );
    expect(node).toEqual([{ kinds: ['Node'], jobs: [], status: false, events: true }]); // NodeRegistered
  });

  it('tells of a change only once every transaction that began before it ended', async () => {
    const client = await t.db.connect();
    const from = heard.length;
    try {
      await client.query('BEGIN');
      await client.query('UPDATE jobs SET labels = \'{"a":"b"}\' WHERE name = \'feed-1\'');
      await submitJob(t.db, jobRequest('feed-2'));
      // feed-2 committed while the older transaction runs: held back behind it, read after read.
      const beat = beats;
      await eventually(() => beats >= beat + 5, { what: 'five reads of the feed' });
      expect(heard.slice(from)).toEqual([]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await eventually(() => heard.slice(from).some((c) => c.jobs?.includes('default/feed-2')), {
      what: 'feed-2 told once the older transaction ended',
    });
    expect(
      heard
        .slice(from)
        .flatMap((c) => c.jobs ?? [])
        .sort(),
    ).toEqual(['default/feed-1', 'default/feed-2']);
  });
});
