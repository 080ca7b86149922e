// The database's check of queue limits, alone: a round planned under a limit that a user lowers
// before the round commits is refused whole, and with the check broken (FENCER_BREAK_GUARDS=
// queue-limit-commit) it commits past the new limit. Placement runs in this process against a
// real PostgreSQL, with a lease that says we lead at epoch 7.
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { submitJobs } from '../../src/store/jobs.js';
import { applyQueue, applyQuota } from '../../src/fair-share/store.js';
import { eventually } from '../helpers/eventually.js';
import { sql } from '../../src/store/sql.js';
import { randomUUID } from 'node:crypto';
import { commitPlacements, readPlacementInput } from '../../src/placement/store.js';
import { bestFit } from '../../src/placement/best-fit.js';
import { newShareMemory } from '../../src/fair-share/share-order.js';
import { fenced } from '../../src/lease/fenced.js';
import type { Lease } from '../../src/lease/lease.js';
import { jobRequest } from '../helpers/jobs.js';
import type { QueueRequest } from '../../src/domain/resources.js';

const leader = { epoch: () => 7 } as unknown as Lease;
const open: TestDatabase[] = [];

afterEach(async () => {
  delete process.env.FENCER_BREAK_GUARDS;
  await Promise.all(open.splice(0).map((t) => t.close()));
});

const limited = (limit: number): QueueRequest => ({
  namespace: 'default',
  name: 'limited',
  labels: {},
  spec: { concurrencyLimit: limit },
  weight: 1,
  concurrencyLimit: limit,
  cpuLimitMillis: null,
  memoryLimitBytes: null,
  strictLanes: false,
});

describe.each([{ broken: false }, { broken: true }])(
  'the database checks queue limits when placing (broken: $broken)',
  ({ broken }) => {
    it(
      broken
        ? 'commits a stale round past a limit lowered meanwhile'
        : 'refuses a round planned under a limit lowered before it commits',
      async () => {
        const t = await freshDatabase(`queue_commit_${broken}`);
        open.push(t);
        await t.db.query("UPDATE lease SET holder = 'test', epoch = 7, expires_at = now() + interval '1 hour'");
        await registerNode(t.db, 'n1', 8000, 16 * 1024 ** 3, {});
        await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
        await applyQueue(t.db, limited(5));
        await submitJobs(
          t.db,
          Array.from({ length: 5 }, (_, i) => ({ ...jobRequest(`j${i}`), queue: 'limited' })),
        );

        const input = await readPlacementInput(t.db, 100, 60_000);
        const round = bestFit(
          input.jobs,
          input.nodes,
          undefined,
          {},
          { fairShare: true, queues: input.queues, quotas: input.quotas, memory: newShareMemory() },
        );
        expect(round.placements).toHaveLength(5);
        await applyQueue(t.db, limited(2)); // between the round's read and its commit
        if (broken) process.env.FENCER_BREAK_GUARDS = 'queue-limit-commit';
        const commit = fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, round.placements));
        if (broken) await commit;
        else await expect(commit).rejects.toThrow(/queue default\/limited would run 5 jobs/);
        const active = (
          await t.db.query(
            "SELECT count(*)::int AS n FROM assignments WHERE queue = 'limited' AND state IN ('Assigned', 'Running')",
          )
        ).rows[0].n;
        expect(active).toBe(broken ? 5 : 0);
      },
    );
  },
);

// A limit put on a queue that had none, or a namespace quota created, while a placement into it
// is between the limits check and its commit: the user's write waits for the placement (then
// the placement was before the limit existed), instead of being acknowledged while a placement
// past it is about to commit (found by an independent review).
describe('a limit added while a placement commits', () => {
  it.each([
    { what: 'a queue limit', write: (t: TestDatabase) => applyQueue(t.db, { ...limited(1), name: 'open' }) },
    {
      what: 'a namespace quota',
      write: (t: TestDatabase) =>
        applyQuota(t.db, {
          namespace: 'default',
          name: 'rq',
          labels: {},
          spec: {},
          pendingJobs: null,
          cpuLimitMillis: 1000,
          memoryLimitBytes: null,
          ratePerSecond: null,
          rateBurst: null,
        }),
    },
  ])('$what waits for the placement to commit', async ({ write }) => {
    const t = await freshDatabase(`queue_limit_added_${write.length}_${Math.random().toString(36).slice(2, 6)}`);
    open.push(t);
    await registerNode(t.db, 'n1', 8000, 16 * 1024 ** 3, {});
    await applyQueue(t.db, { ...limited(1), name: 'open', spec: {}, concurrencyLimit: null });
    const submitted = await submitJobs(
      t.db,
      [0, 1, 2].map((i) => ({ ...jobRequest(`j${i}`), queue: 'open' })),
    );
    if (submitted.outcome !== 'accepted') throw new Error('not accepted');
    const uids = submitted.results.map((r) => r.job.uid);
    const placing = await t.db.connect();
    try {
      await placing.query('BEGIN');
      await placing.query(sql('placement/place'), [uids, uids.map(() => 'n1'), uids.map(() => randomUUID()), 1]);
      let acknowledged = false;
      const userWrite = write(t).then(() => (acknowledged = true));
      const waiting = async () =>
        (
          await t.db.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          )
        ).rowCount! > 0;
      await eventually(async () => acknowledged || (await waiting()), { what: 'the user write to finish or wait' });
      expect(acknowledged).toBe(false);
      await placing.query('COMMIT');
      await userWrite;
    } finally {
      placing.release();
    }
  });
});
