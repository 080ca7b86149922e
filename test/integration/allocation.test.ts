// What a node holds (nodes.allocated_*, and its runs and unclaimed runs) is always the sum of its active assignments: placement's
// capacity check reads it, so a count that is too low overcommits the node, and one that goes
// negative fails every later report of that node. Checked here after sequences of every
// operation that places or ends an assignment, and for the interleaving that once broke it: a
// late duplicate registration that waited behind a placement's lock and recounted from a
// snapshot without that placement.
import { DEFAULT_TIMINGS, overdueSlackMs } from '../../src/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { fenced } from '../../src/lease/fenced.js';
import { commitPlacements } from '../../src/placement/store.js';
import { declareNodeDead } from '../../src/node-health/store.js';
import { returnUnconfirmed, retryOrphaned, orphanedJobs } from '../../src/job-reconcile/store.js';
import { cancelJob, deleteJob, submitJob } from '../../src/store/jobs.js';
import { registerNode } from '../../src/agent-protocol/nodes-store.js';
import { applyReports, markDelivered } from '../../src/agent-protocol/reports-store.js';
import { seededRandom } from '../../src/seeded-random.js';
import { jobRequest } from '../helpers/jobs.js';

const leader = { epoch: () => 7 };
const GiB = 1024 ** 3;
const RULE = { silentMs: 5000, disconnectedMs: 1000, disconnectedQuietMs: 1500 };

/** Nodes whose allocated_* differ from the sum of their active assignments. */
async function miscounted(t: TestDatabase): Promise<Array<{ name: string; allocated: number; held: number }>> {
  return (
    await t.db.query(`
      SELECT n.name, n.allocated_cpu_millis::int AS allocated, coalesce(sum(a.cpu_millis), 0)::int AS held
      FROM nodes n LEFT JOIN assignments a ON a.node = n.name AND a.state IN ('Assigned', 'Running')
      GROUP BY n.name, n.allocated_cpu_millis, n.allocated_memory_bytes, n.allocated_jobs, n.unclaimed_jobs
      HAVING n.allocated_cpu_millis <> coalesce(sum(a.cpu_millis), 0) OR n.allocated_memory_bytes <> coalesce(sum(a.memory_bytes), 0)
          OR n.allocated_jobs <> count(a.id) OR n.unclaimed_jobs <> count(a.id) FILTER (WHERE a.state = 'Assigned')`)
  ).rows;
}

describe('a node allocation', () => {
  let t: TestDatabase;
  const incarnations = new Map<string, string>();

  beforeAll(async () => {
    t = await freshDatabase('allocation');
    await t.db.query("UPDATE lease SET holder = 't', epoch = 7, expires_at = now() + interval '1 hour'");
    for (const n of ['n1', 'n2', 'n3']) {
      incarnations.set(n, randomUUID());
      await registerNode(t.db, n, 4000, 8 * GiB, {}, incarnations.get(n));
    }
    await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
  });

  afterAll(async () => {
    await t?.close();
  });

  it('counts a placement that a late duplicate registration waited behind', async () => {
    const uid = (await submitJob(t.db, jobRequest('behind'))).job.uid;
    const placing = await t.db.connect();
    try {
      await placing.query('BEGIN');
      await placing.query("SELECT set_config('fencer.epoch', '7', true)");
      expect(await commitPlacements(placing, 7, [{ jobUid: uid, node: 'n1' }])).toBe(1);
      // The same incarnation registers again (its first request timed out at the node, reached
      // the database late): it must wait for the placement's lock on the node.
      const registering = registerNode(t.db, 'n1', 4000, 8 * GiB, {}, incarnations.get('n1'));
      await eventually(
        async () => {
          const waiting = await t.db.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO nodes%'",
          );
          return (waiting.rowCount ?? 0) > 0;
        },
        { what: 'the registration to wait on the node row' },
      );
      await placing.query('COMMIT');
      await registering;
    } finally {
      placing.release();
    }
    expect(await miscounted(t)).toEqual([]);
  });

  it('is the sum of the active assignments after any sequence of operations', async () => {
    const random = seededRandom(42);
    let deaths = 0;
    const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(random() * items.length)];
    const active = async () =>
      (
        await t.db.query<{ id: string; job_uid: string; node: string; state: string; name: string }>(
          "SELECT a.id, a.job_uid, a.node, a.state, j.name FROM assignments a JOIN jobs j ON j.uid = a.job_uid WHERE a.state IN ('Assigned', 'Running')",
        )
      ).rows;
    const ready = async () =>
      (await t.db.query<{ name: string }>("SELECT name FROM nodes WHERE state = 'Ready'")).rows.map((r) => r.name);
    const operations: Record<string, () => Promise<unknown>> = {
      place: async () => {
        const nodes = await ready();
        const uids: string[] = [];
        for (let i = 0; i < 3; i++)
          uids.push(
            (await submitJob(t.db, jobRequest(`j-${randomUUID().slice(0, 8)}`, 100 + Math.floor(random() * 900)))).job
              .uid,
          );
        const placements = uids.map((jobUid) => ({ jobUid, node: pick(nodes)! }));
        await fenced(t.db, leader, (tx, epoch) => commitPlacements(tx, epoch, placements)).catch(() => 0);
        // Sent to their nodes, some with no time at all to claim them.
        const sent = (
          await t.db.query<{ id: string; node: string }>('SELECT id, node FROM assignments WHERE job_uid = ANY($1)', [
            uids,
          ])
        ).rows;
        for (const a of sent)
          await markDelivered(t.db, [{ id: a.id, node: a.node, agoMs: 0 }], random() < 0.3 ? 0 : 60_000);
      },
      start: async () => {
        const a = pick(await active());
        if (a) await applyReports(t.db, a.node, [{ kind: 'started', id: a.id }]);
      },
      finish: async () => {
        const a = pick(await active());
        if (a)
          await applyReports(t.db, a.node, [
            { kind: 'started', id: a.id },
            { kind: 'finished', id: a.id, outcome: 'Succeeded', message: null },
          ]);
      },
      abandon: async () => {
        const a = pick(await active());
        if (a) await applyReports(t.db, a.node, [{ kind: 'abandoned', id: a.id }]);
        const orphans = await orphanedJobs(t.db, 100);
        await fenced(t.db, leader, (tx) => retryOrphaned(tx, orphans));
      },
      unconfirmed: async () => {
        const late = (
          await t.db.query<{ id: string; job_uid: string }>(
            "SELECT id, job_uid FROM assignments WHERE state = 'Assigned' AND confirm_by < now()",
          )
        ).rows;
        await fenced(t.db, leader, (tx) => returnUnconfirmed(tx, late, { confirmTimeoutMs: 0, undeliveredMs: 60_000 }));
      },
      cancel: async () => {
        const a = pick(await active());
        if (a) await cancelJob(t.db, 'default', a.name, overdueSlackMs(DEFAULT_TIMINGS));
      },
      delete: async () => {
        const a = pick(await active());
        if (a) await deleteJob(t.db, 'default', a.name, overdueSlackMs(DEFAULT_TIMINGS));
      },
      die: async () => {
        const node = pick(await ready());
        if (!node) return;
        await t.db.query("UPDATE node_heartbeats SET at = now() - interval '1 hour' WHERE name = $1", [node]);
        await t.db.query(
          "UPDATE lease SET acquired_at = now() - interval '1 hour', grace_from = now() - interval '1 hour'",
        );
        if ((await fenced(t.db, leader, (tx) => declareNodeDead(tx, node, RULE, 'test'))) !== null) deaths++;
      },
      'register again': async () => {
        const node = pick(['n1', 'n2', 'n3'])!;
        await registerNode(t.db, node, 4000, 8 * GiB, {}, incarnations.get(node));
        await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid() WHERE name = $1', [node]);
      },
      restart: async () => {
        const node = pick(['n1', 'n2', 'n3'])!;
        incarnations.set(node, randomUUID());
        await registerNode(t.db, node, 4000, 8 * GiB, {}, incarnations.get(node));
        await t.db.query('UPDATE nodes SET watch_session = gen_random_uuid() WHERE name = $1', [node]);
      },
    };
    const names = Object.keys(operations);
    const weights = names.map((n) => (n === 'place' ? 4 : n === 'die' || n === 'restart' ? 0.3 : 1));
    const total = weights.reduce((a, b) => a + b, 0);
    const choose = () => {
      let r = random() * total;
      for (let i = 0; i < names.length; i++) if ((r -= weights[i]!) < 0) return names[i]!;
      return names[0]!;
    };
    for (let step = 0; step < 150; step++) {
      // Two at once, as two replicas would: reports, registrations and decisions race.
      const pair = [choose(), choose()];
      await Promise.all(pair.map((name) => operations[name]!()));
      const wrong = await miscounted(t);
      if (wrong.length > 0) throw new Error(`after step ${step} (${pair.join(' + ')}): ${JSON.stringify(wrong)}`);
    }
    // The sequence went every way an assignment can end, or the check above proved less than it says.
    const ended = (
      await t.db.query<{ state: string }>(
        "SELECT DISTINCT state FROM assignments WHERE state NOT IN ('Assigned', 'Running')",
      )
    ).rows.map((r) => r.state);
    expect(ended.sort()).toEqual(['Cancelled', 'Lost', 'Succeeded', 'Unconfirmed']);
    expect(deaths).toBeGreaterThan(0);
  });

  it('is miscounted, and the check above says so, when the triggers are dropped (the broken variant)', async () => {
    const broken = await freshDatabase('allocation_broken');
    try {
      await broken.db.query("UPDATE lease SET holder = 't', epoch = 7, expires_at = now() + interval '1 hour'");
      await registerNode(broken.db, 'n1', 4000, 8 * GiB, {});
      await broken.db.query('UPDATE nodes SET watch_session = gen_random_uuid()');
      await broken.db.query('DROP TRIGGER assignments_allocate ON assignments');
      const uid = (await submitJob(broken.db, jobRequest('uncounted'))).job.uid;
      await fenced(broken.db, leader, (tx, epoch) => commitPlacements(tx, epoch, [{ jobUid: uid, node: 'n1' }]));
      expect(await miscounted(broken)).toEqual([{ name: 'n1', allocated: 0, held: 500 }]);
    } finally {
      await broken.close();
    }
  });

  describe('a record of sends', () => {
    // A node of its own: the random sequence above may have left n1–n3 dead.
    beforeAll(async () => {
      await registerNode(t.db, 'n4', 4000, 8 * GiB, {}, randomUUID());
      await t.db.query("UPDATE nodes SET watch_session = gen_random_uuid() WHERE name = 'n4'");
    });

    /** Records sends of a run a claim holds locked and of a free one: 'recorded', or 'waited' on the lock. */
    async function recordBesideAClaim(): Promise<{ outcome: string; stamped: string[] }> {
      const uids = [
        (await submitJob(t.db, jobRequest('claimed-now'))).job.uid,
        (await submitJob(t.db, jobRequest('not-claimed'))).job.uid,
      ];
      await fenced(t.db, leader, (tx, epoch) =>
        commitPlacements(
          tx,
          epoch,
          uids.map((jobUid) => ({ jobUid, node: 'n4' })),
        ),
      );
      const ids = (
        await t.db.query<{ id: string }>(
          'SELECT id FROM assignments WHERE job_uid = ANY($1) ORDER BY job_uid = $2 DESC',
          [uids, uids[0]],
        )
      ).rows.map((r) => r.id);
      const claim = await t.db.connect();
      try {
        await claim.query('BEGIN');
        await claim.query('SELECT 1 FROM assignments WHERE id = $1 FOR UPDATE', [ids[0]]);
        let settled = false;
        const recording = markDelivered(
          t.db,
          ids.map((id) => ({ id, node: 'n4', agoMs: 0 })),
          60_000,
        ).then(() => 'recorded');
        void recording.finally(() => (settled = true));
        const waited = eventually(
          async () => {
            if (settled) return true;
            const waiting = await t.db.query(
              "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%confirm_by%'",
            );
            return (waiting.rowCount ?? 0) > 0;
          },
          { what: 'the record to end or to wait on the lock' },
        ).then(() => (settled ? 'recorded' : 'waited'));
        const outcome = await Promise.race([recording, waited]);
        await claim.query('ROLLBACK');
        await recording;
        const stamped = (
          await t.db.query<{ id: string }>('SELECT id FROM assignments WHERE id = ANY($1) AND confirm_by IS NOT NULL', [
            ids,
          ])
        ).rows.map((r) => (r.id === ids[0] ? 'claimed-now' : 'not-claimed'));
        return { outcome, stamped };
      } finally {
        claim.release();
      }
    }

    it('never waits for a run a claim holds: it stamps the others', async () => {
      expect(await recordBesideAClaim()).toEqual({ outcome: 'recorded', stamped: ['not-claimed'] });
    });

    it('waits on the claim with the broken variant (delivery-skip-locked)', async () => {
      process.env.FENCER_BREAK_GUARDS = 'delivery-skip-locked';
      try {
        expect((await recordBesideAClaim()).outcome).toBe('waited');
      } finally {
        delete process.env.FENCER_BREAK_GUARDS;
      }
    });
  });
});
