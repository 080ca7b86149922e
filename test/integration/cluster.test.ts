// A whole cluster of real processes: 3 replicas and 4 nodes (each behind its own TCP proxy)
// on one PostgreSQL. Chaos by real signals. The history is read after every scenario: no job
// may ever have had two active assignments, and every job must finish.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { mkdtempSync, readFileSync, existsSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, jobPhases, runFindings } from '../helpers/history.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { unfinishedCount } from '../../src/store/jobs.js';
import { leaderAfter as leaderAfterEpoch } from '../helpers/leader.js';
import { CHANNELS } from '../../src/store/channels.js';
import { adminFetch } from '../helpers/auth.js';

let t: TestDatabase;
let cluster: Cluster;
let home: string;
let holdFile: string;

function allNodeLogs(): string[] {
  return ['node-1', 'node-2', 'node-3', 'node-4'].map((n) => cluster.nodeLogFile(n));
}

function nodeLog(node: string): Array<Record<string, any>> {
  const file = cluster.nodeLogFile(node);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function unfinished(): Promise<number> {
  return unfinishedCount(t.db);
}

async function allFinished(timeoutMs = 60_000): Promise<void> {
  await eventually(async () => (await unfinished()) === 0, { timeoutMs, what: 'every job to finish' });
}

/** Submits `count` jobs, one every `everyMs`, while the caller does something nasty. */
function flow(prefix: string, count: number, everyMs: number, opts: Parameters<typeof jobYaml>[1] = {}): Promise<void> {
  return (async () => {
    for (let i = 0; i < count; i++) {
      await eventually(async () => (await submit(cluster.replicaUrls, jobYaml(`${prefix}-${i}`, opts))) < 300, {
        what: `submission of ${prefix}-${i}`,
      });
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
}

async function leaderAfter(epoch: number, startedAt: number): Promise<{ name: string; epoch: number; ms: number }> {
  return { ...(await leaderAfterEpoch(cluster, epoch)), ms: Date.now() - startedAt };
}

beforeAll(async () => {
  t = await freshDatabase('cluster');
  home = mkdtempSync(join(tmpdir(), 'fencer-cluster-'));
  holdFile = join(home, 'hold-fenced-tx');
  cluster = await Cluster.start({
    replicas: 3,
    nodes: 4,
    nodeCpu: '4',
    nodeMemory: '8Gi',
    nodeLabels: (i) => ({ pool: 'default', zone: `z${i + 1}` }),
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
    env: { FENCER_TEST_HOLD_FENCED_TX: holdFile },
  });
});

afterAll(async () => {
  await cluster?.stop();
  await t?.close();
  if (!process.env.FENCER_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
  else console.log(`cluster home kept: ${home}`);
});

describe('a cluster of real processes', () => {
  it('runs jobs to completion, each placed once', async () => {
    await flow('plain', 16, 20);
    await allFinished();
    expect(await jobPhases(t.db)).toEqual({ Succeeded: 16 });
    expect(await runFindings(t.db, allNodeLogs())).toEqual(CLEAN);
  });

  it('a node rejects an assignment from an older epoch', async () => {
    // Two jobs no node will take on its own, placed by hand on node-3: first under the current
    // epoch, then under an older one, as a deposed leader's late delivery would look.
    // Gone again however this test ends: they never finish, and the tests after wait for every job.
    onTestFinished(async () => {
      for (const name of ['epoch-new', 'epoch-old'])
        await adminFetch(`${cluster.replicaUrls[0]}/api/v1/namespaces/default/jobs/${name}`, { method: 'DELETE' });
    });
    for (const name of ['epoch-new', 'epoch-old']) {
      expect(
        await submit(
          cluster.replicaUrls,
          jobYaml(name, { cpu: '100m', memory: '64Mi', duration: '1s', nodeSelector: { pool: 'nowhere' } }),
        ),
      ).toBe(201);
    }
    const { epoch } = await eventually(() => cluster.leader(), { what: 'a leader' });
    const place = async (name: string, assignmentEpoch: number) => {
      await t.db.query(
        `WITH j AS (UPDATE jobs SET phase = 'Assigned', node = 'node-3', epoch = $2, assignment_id = gen_random_uuid()
                    WHERE name = $1 RETURNING uid, assignment_id, cpu_millis, memory_bytes, duration_ms)
         INSERT INTO assignments (id, job_uid, node, epoch, attempt, state, cpu_millis, memory_bytes, duration_ms, confirm_by)
         SELECT assignment_id, uid, 'node-3', $2, 1, 'Assigned', cpu_millis, memory_bytes, duration_ms, now() + interval '5 s' FROM j`,
        [name, assignmentEpoch],
      );
      await t.db.query('SELECT pg_notify($1, $2)', [CHANNELS.assignments, 'node-3']);
    };
    await place('epoch-new', epoch);
    await eventually(() => nodeLog('node-3').some((l) => l.event === 'start' && l.job === 'default/epoch-new'), {
      what: 'node-3 to run the current-epoch job',
    });
    await place('epoch-old', epoch - 1);
    await eventually(() => nodeLog('node-3').some((l) => l.event === 'reject' && l.job === 'default/epoch-old'), {
      what: 'node-3 to reject the old-epoch job',
    });
    expect(nodeLog('node-3').some((l) => l.event === 'start' && l.job === 'default/epoch-old')).toBe(false);
    // Never confirmed, so job-reconcile gives it back, without using an attempt. Read from the
    // history: the next round may already have written its Unschedulable over the reason.
    const back = await eventually(
      async () =>
        (
          await t.db.query(
            `SELECT h.reason, j.attempt FROM history h JOIN jobs j ON j.uid = h.job_uid
             WHERE h.entity = 'job' AND h.job = 'default/epoch-old' AND h.from_state = 'Assigned' AND h.to_state = 'Pending'`,
          )
        ).rows[0],
      { what: 'the unconfirmed placement to be given back' },
    );
    expect(back).toEqual({ reason: 'NotConfirmed', attempt: 1 });
  });

  it('a leader frozen inside a fenced transaction is replaced, and its write is rejected when it wakes', async () => {
    const before = await eventually(() => cluster.leader(), { what: 'a leader' });
    writeFileSync(holdFile, 'hold');
    expect(await submit(cluster.replicaUrls, jobYaml('frozen-mid-decision'))).toBe(201);
    await eventually(() => existsSync(`${holdFile}.inside`), {
      what: 'the leader to be inside its fenced transaction',
    });
    const holder = JSON.parse(readFileSync(`${holdFile}.inside`, 'utf8'));
    expect(holder).toEqual({ pid: cluster.pid(before.name), replica: before.name });
    const startedAt = Date.now();
    await cluster.freeze(before.name);
    // Resumed however this test ends: the tests after kill and freeze leaders of their own.
    onTestFinished(() =>
      cluster.resume(before.name).then(
        () => undefined,
        () => undefined,
      ),
    );
    rmSync(holdFile); // the next leader must not hold; the frozen one continues when resumed
    rmSync(`${holdFile}.inside`);
    const after = await leaderAfter(before.epoch, startedAt);
    expect(after.name).not.toBe(before.name);
    console.log(`frozen mid-transaction: new leader ${after.name} at epoch ${after.epoch} after ${after.ms} ms`);
    await allFinished();
    await cluster.resume(before.name);
    await eventually(
      () => readFileSync(cluster.processLogFile(before.name), 'utf8').includes('fenced transaction rejected'),
      {
        what: 'the old leader to log that its write was rejected',
      },
    );
    // Both show in the cluster's events (fencer get events, the dashboard). The refusal is
    // recorded after it is logged, by its own write: wait for it.
    const events = await eventually(
      async () => {
        const items = (
          await cluster.askAnyReplica<{ items: Array<Record<string, unknown>> }>('/api/v1/clusterevents?limit=1000')
        ).items;
        return items.some((e) => e.reason === 'FencedRejection') ? items : null;
      },
      { what: 'the FencedRejection event' },
    );
    expect(events).toContainEqual(
      expect.objectContaining({ reason: 'LeaderElected', object: `replica/${after.name}`, epoch: after.epoch }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'Warning',
        reason: 'FencedRejection',
        object: `replica/${before.name}`,
        epoch: before.epoch,
      }),
    );
    const placements = (
      await t.db.query(
        "SELECT epoch FROM history WHERE entity = 'assignment' AND to_state = 'Assigned' AND job = 'default/frozen-mid-decision'",
      )
    ).rows;
    expect(placements).toEqual([{ epoch: after.epoch }]);
    expect(await runFindings(t.db, allNodeLogs())).toEqual(CLEAN);
  });

  it('SIGKILL of the leader while jobs flow: a new leader at once, every job finishes, none placed twice', async () => {
    const jobs = flow('kill', 30, 50);
    await new Promise((r) => setTimeout(r, 500));
    const before = await eventually(() => cluster.leader(), { what: 'a leader' });
    const { signalledAt } = await cluster.kill(before.name);
    const after = await leaderAfter(before.epoch, signalledAt!);
    console.log(`SIGKILL: new leader ${after.name} at epoch ${after.epoch} after ${after.ms} ms`);
    await jobs;
    await allFinished();
    expect(await runFindings(t.db, allNodeLogs())).toEqual(CLEAN);
    const mine = (
      await t.db.query("SELECT phase, count(*)::int AS n FROM jobs WHERE name LIKE 'kill-%' GROUP BY phase")
    ).rows;
    expect(mine).toEqual([{ phase: 'Succeeded', n: 30 }]);
  });

  it('SIGSTOP of the leader while jobs flow, resumed later: replaced after its lease, it cannot decide when it wakes', async () => {
    const jobs = flow('freeze', 30, 50);
    await new Promise((r) => setTimeout(r, 500));
    const before = await eventually(() => cluster.leader(), { what: 'a leader' });
    const { signalledAt } = await cluster.freeze(before.name);
    const after = await leaderAfter(before.epoch, signalledAt!);
    console.log(`SIGSTOP: new leader ${after.name} at epoch ${after.epoch} after ${after.ms} ms`);
    await new Promise((r) => setTimeout(r, 1500));
    const resumedAt = new Date();
    await cluster.resume(before.name);
    await jobs;
    await allFinished();
    expect(await runFindings(t.db, allNodeLogs())).toEqual(CLEAN);
    // Woken, it placed nothing at its old epoch (it may lead again later, elected anew).
    const late = await t.db.query(
      "SELECT job FROM history WHERE entity = 'assignment' AND to_state = 'Assigned' AND epoch = $1 AND at > $2",
      [before.epoch, resumedAt],
    );
    expect(late.rows).toEqual([]);
    expect((await eventually(() => cluster.leader(), { what: 'a leader' })).epoch).toBeGreaterThanOrEqual(after.epoch);
  });

  it("a killed node's jobs are rescheduled on other nodes using no attempt, or are dead letters at maxDisruptions", async () => {
    expect(
      await submit(
        cluster.replicaUrls,
        jobYaml('only-once', { cpu: '500m', memory: '256Mi', duration: '6s', nodeSelector: { zone: 'z1' } }) +
          '  maxDisruptions: 1\n',
      ),
    ).toBe(201);
    await flow('victim', 8, 10, { cpu: '1', memory: '1Gi', duration: '6s' });
    const onNode1 = await eventually(
      async () => {
        const rows = (
          await t.db.query("SELECT name FROM jobs WHERE node = 'node-1' AND phase = 'Running' AND name LIKE 'victim-%'")
        ).rows;
        const once = (await t.db.query("SELECT phase FROM jobs WHERE name = 'only-once'")).rows[0];
        return rows.length > 0 && once.phase === 'Running' && rows.map((r) => r.name);
      },
      { what: 'jobs running on node-1' },
    );
    await cluster.kill('node-1');
    await allFinished();
    const once = (await t.db.query("SELECT phase, reason, attempt, disruptions FROM jobs WHERE name = 'only-once'"))
      .rows[0];
    expect(once).toEqual({ phase: 'Dead', reason: 'TooManyDisruptions', attempt: 1, disruptions: 1 });
    const events = (await cluster.askAnyReplica<{ items: unknown[] }>('/api/v1/clusterevents?limit=1000')).items;
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'NodeDied', object: 'node/node-1' }),
    );
    const moved = (
      await t.db.query('SELECT name, node, attempt, disruptions, phase FROM jobs WHERE name = ANY($1)', [onNode1])
    ).rows;
    // The kill is one disruption; on a loaded machine a moved job can meet another (a claim past its
    // confirm timeout): disruptions never use an attempt either way.
    for (const job of moved) expect(job).toMatchObject({ phase: 'Succeeded', attempt: 1 });
    for (const job of moved) expect(job.disruptions).toBeGreaterThanOrEqual(1);
    for (const job of moved) expect(job.node).not.toBe('node-1');
    const died = (
      await t.db.query("SELECT count(*)::int AS n FROM history WHERE entity = 'job' AND reason = 'NodeDied'")
    ).rows[0].n;
    expect(died).toBeGreaterThanOrEqual(onNode1.length);
    expect(await runFindings(t.db, allNodeLogs())).toEqual(CLEAN);
  });

  it('a node cut off from every replica stops its own jobs before it is declared dead', async () => {
    await flow('cut', 8, 10, { cpu: '1', memory: '1Gi', duration: '10s' });
    await eventually(
      async () =>
        (await t.db.query("SELECT count(*)::int AS n FROM jobs WHERE node = 'node-2' AND phase = 'Running'")).rows[0]
          .n > 0,
      {
        what: 'jobs running on node-2',
      },
    );
    await cluster.partition('node-2');
    const deadAt = await eventually(
      async () =>
        (await t.db.query("SELECT dead_at FROM nodes WHERE name = 'node-2' AND state = 'Dead'")).rows[0]?.dead_at as
          Date | undefined,
      {
        what: 'node-2 to be declared dead',
      },
    );
    const fenced = nodeLog('node-2').filter((l) => l.event === 'stop' && l.reason === 'self-fence');
    expect(fenced.length).toBeGreaterThan(0);
    for (const stop of fenced) expect(stop.wallMs).toBeLessThan(deadAt.getTime());
    console.log(
      `self-fence ${deadAt.getTime() - Math.max(...fenced.map((s) => s.wallMs))} ms before the node was declared dead`,
    );
    await cluster.heal('node-2');
    await allFinished();
    expect(await runFindings(t.db, allNodeLogs())).toEqual(CLEAN);
    // After healing, node-2 registered again and is Ready.
    await eventually(
      async () => (await t.db.query("SELECT state FROM nodes WHERE name = 'node-2'")).rows[0].state === 'Ready',
      { what: 'node-2 to come back' },
    );
  });

  it('SIGTERM of the leader: it steps down, releasing the lease, and another replica leads', async () => {
    const before = await eventually(() => cluster.leader(), { what: 'a leader' });
    process.kill(cluster.pid(before.name)!, 'SIGTERM');
    const after = await leaderAfter(before.epoch, Date.now());
    expect(after.name).not.toBe(before.name);
    await eventually(() => !cluster.isRunning(before.name), { what: 'the old leader to exit' });
    const log = readFileSync(cluster.processLogFile(before.name), 'utf8');
    expect(log).toMatch(/"reason":"stepped down"/);
  });
});
