// The lease survives load: a leader whose event loop is kept busy in slices (a test fault: 400 ms
// of synchronous work every 500 ms, what a long parse or sort does) still renews on its own timer
// and connection, and keeps the lease while jobs flow. The same leader blocked once for longer
// than the lease loses it: the test can fail, and the fence still holds (the checker is clean).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { check } from '../../src/checker/check.js';
import { readCheckInput } from '../../src/checker/read.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { setFaults } from '../helpers/faults.js';

let t: TestDatabase;
let cluster: Cluster;
let home: string;
let faults: string;

beforeAll(async () => {
  t = await freshDatabase('lease_load');
  home = mkdtempSync(join(tmpdir(), 'fencer-lease-load-'));
  faults = join(home, 'faults.json');
  setFaults(faults, {});
  cluster = await Cluster.start({
    replicas: 2,
    nodes: 1,
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
    env: { FENCER_TEST_FAULTS: faults },
  });
});
afterAll(async () => {
  await cluster?.stop();
  await t?.close();
  if (!process.env.FENCER_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
});

const leaseRow = async () =>
  (await t.db.query<{ holder: string; epoch: number }>('SELECT holder, epoch FROM lease')).rows[0]!;
const done = async (prefix: string) =>
  (await t.db.query("SELECT 1 FROM jobs WHERE name LIKE $1 AND phase <> 'Succeeded'", [`${prefix}-%`])).rows.length ===
  0;

/** Jobs submitted one after another while the fault is in force; returns when each has ended. */
async function flow(prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await eventually(
      async () =>
        (await submit(
          cluster.replicaUrls,
          jobYaml(`${prefix}-${i}`, { cpu: '100m', memory: '64Mi', duration: '300ms' }),
        )) === 201,
      {
        what: `submission of ${prefix}-${i}`,
      },
    );
  }
  await eventually(() => done(prefix), { timeoutMs: 60_000, what: `every ${prefix} job to succeed` });
}

describe('a leader whose event loop is busy', () => {
  it('in slices (400 ms of every 500 ms) keeps its lease while jobs flow', async () => {
    const before = await eventually(
      async () => {
        const row = await leaseRow();
        return row.holder ? row : null;
      },
      { what: 'a leader' },
    );
    setFaults(faults, { loop: { replicas: [before.holder], blockMs: 400, everyMs: 500 } });
    const since = (await t.db.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    await flow('sliced', 20);
    // Held for three lease lengths at least: until the leader renewed that long after the fault began.
    await eventually(
      async () =>
        (
          await t.db.query(
            "SELECT 1 FROM lease WHERE renewed_at > $1::timestamptz + $2::bigint * interval '1 millisecond'",
            [since, 3 * DEFAULT_TIMINGS.leaseMs],
          )
        ).rows.length > 0,
      { timeoutMs: 30_000, what: 'the leader to renew three lease lengths into the fault' },
    );
    setFaults(faults, {});
    expect(await leaseRow()).toEqual(before); // same holder, same epoch: the lease never changed hands
  });

  it('for longer than the lease at once loses it, and nothing runs twice', async () => {
    const before = await leaseRow();
    setFaults(faults, {
      loop: { replicas: [before.holder], blockMs: 2 * DEFAULT_TIMINGS.leaseMs + 500, everyMs: 60_000 },
    });
    await eventually(async () => (await leaseRow()).epoch > before.epoch, { timeoutMs: 20_000, what: 'another epoch' });
    setFaults(faults, {});
    await flow('after', 5);
    const logs = [cluster.nodeLogFile('node-1')].filter(existsSync);
    const report = check(await readCheckInput(t.db, logs));
    expect(report.placedTwice).toEqual([]);
    expect(report.overlappingRuns).toEqual([]);
  });
});
