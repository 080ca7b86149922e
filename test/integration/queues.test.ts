// Queue limits and quotas on a cluster of real processes (3 replicas, 4 agents), through a leader
// kill and a leader freeze: the checker reads the nodes' own run logs and finds no instant at
// which a queue ran more than its limits. The broken variants (FENCER_BREAK_GUARDS) show what
// each guard holds: without both the plan and the database's check, a queue runs past its limit.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { CLEAN, placementsOverRate, runFindings } from '../helpers/history.js';
import { jobYaml, submit, type JobYamlOptions } from '../helpers/jobs.js';
import { applyQueue, applyQuota } from '../../src/fair-share/store.js';
import { setFaults } from '../helpers/faults.js';
import { unfinishedCount } from '../../src/store/jobs.js';
import { readCheckInput } from '../../src/checker/read.js';
import type { QueueRequest } from '../../src/domain/resources.js';
import { leaderAfter } from '../helpers/leader.js';
import { adminFetch } from '../helpers/auth.js';

const NODES = ['node-1', 'node-2', 'node-3', 'node-4'];

let t: TestDatabase | undefined;
let cluster: Cluster | undefined;
let home: string | undefined;

async function start(name: string, env: Record<string, string> = {}): Promise<{ t: TestDatabase; cluster: Cluster }> {
  t = await freshDatabase(name);
  home = mkdtempSync(join(tmpdir(), `fencer-${name}-`));
  cluster = await Cluster.start({
    replicas: 3,
    nodes: NODES.length,
    nodeCpu: '4',
    nodeMemory: '8Gi',
    nodeLabels: (i) => ({ slot: `s${i}` }),
    databaseUrl: t.url,
    home,
    timings: DEFAULT_TIMINGS,
    env,
  });
  return { t, cluster };
}

afterEach(async () => {
  await cluster?.stop();
  await t?.close();
  if (home && !process.env.FENCER_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
  cluster = t = home = undefined;
});

function queue(namespace: string, name: string, extra: Partial<QueueRequest> = {}): QueueRequest {
  return {
    namespace,
    name,
    labels: {},
    spec: {},
    weight: 1,
    concurrencyLimit: null,
    cpuLimitMillis: null,
    memoryLimitBytes: null,
    strictLanes: false,
    ...extra,
  };
}

function flow(c: Cluster, prefix: string, count: number, everyMs: number, opts: JobYamlOptions): Promise<void> {
  return (async () => {
    for (let i = 0; i < count; i++) {
      await eventually(async () => (await submit(c.replicaUrls, jobYaml(`${prefix}-${i}`, opts))) < 300, {
        what: `submission of ${prefix}-${i}`,
      });
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
}

/** The most runs of a queue at once, from the nodes' logs (ends before starts at one instant). */
async function mostAtOnce(db: TestDatabase['db'], c: Cluster, queueKey: string): Promise<number> {
  const input = await readCheckInput(
    db,
    NODES.map((n) => c.nodeLogFile(n)),
  );
  const mine = new Set(input.history.filter((r) => r.entity === 'job' && r.queue === queueKey).map((r) => r.jobUid));
  const events = input.runs
    .filter((l) => mine.has(l.jobUid) && (l.event === 'start' || l.event === 'stop'))
    .map((l) => ({ ms: l.wallMs, delta: l.event === 'start' ? 1 : -1 }));
  events.sort((a, b) => a.ms - b.ms || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const e of events) most = Math.max(most, (now += e.delta));
  return most;
}

describe('queue limits and quotas on a real cluster', () => {
  it('hold through a leader kill and a leader freeze, by the nodes’ logs; a namespace keeps its CPU quota and its token bucket', async () => {
    const { t, cluster } = await start('queues');
    await applyQueue(t.db, queue('default', 'limited', { concurrencyLimit: 3 }));
    await applyQueue(t.db, queue('default', 'capped', { cpuLimitMillis: 2000 }));
    await applyQuota(t.db, {
      namespace: 'rated',
      name: 'limits',
      labels: {},
      spec: {},
      pendingJobs: null,
      cpuLimitMillis: 2000,
      memoryLimitBytes: null,
      ratePerSecond: 4,
      rateBurst: 2,
    });

    const jobs = Promise.all([
      flow(cluster, 'limited', 24, 40, { queue: 'limited' }),
      flow(cluster, 'capped', 16, 60, { queue: 'capped', cpu: '500m' }),
      flow(cluster, 'other', 16, 60, {}),
      flow(cluster, 'rated', 12, 20, { namespace: 'rated' }),
    ]);
    // The limit binds (jobs wait for it, with the reason), then the leader dies, then another freezes.
    await eventually(
      async () =>
        (await t.db.query("SELECT 1 FROM jobs WHERE queue = 'limited' AND reason = 'QueueAtLimit'")).rowCount! > 0,
      { what: 'a job waiting QueueAtLimit' },
    );
    const first = await eventually(() => cluster.leader(), { what: 'a leader' });
    await cluster.kill(first.name);
    await leaderAfter(cluster, first.epoch);
    const second = await eventually(() => cluster.leader(), { what: 'a leader' });
    await cluster.freeze(second.name);
    await leaderAfter(cluster, second.epoch);
    await new Promise((r) => setTimeout(r, 1500));
    await cluster.resume(second.name);
    await jobs;
    await eventually(async () => (await unfinishedCount(t.db)) === 0, {
      timeoutMs: 90_000,
      what: 'every job to finish',
    });

    expect(
      await runFindings(
        t.db,
        NODES.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
    // The limit was reached, so a system that let a fourth run would have shown it.
    expect(await mostAtOnce(t.db, cluster, 'default/limited')).toBe(3);
    expect(await mostAtOnce(t.db, cluster, 'default/capped')).toBeLessThanOrEqual(4);

    // Token bucket: in any span of placements, at most burst + rate × span of them.
    const rated = await placementsOverRate(t.db, 'rated', 2, 4);
    expect(rated.placements).toBeGreaterThanOrEqual(12); // a placement given back after the kill is placed again
    expect(rated.over).toBe(0);
  });

  it('broken variant (queue-limit-plan and queue-limit-commit): a queue runs past its limit', async () => {
    const { t, cluster } = await start('queues-broken', { FENCER_BREAK_GUARDS: 'queue-limit-plan,queue-limit-commit' });
    await applyQueue(t.db, queue('default', 'limited', { concurrencyLimit: 2 }));
    await flow(cluster, 'limited', 12, 0, { queue: 'limited' });
    await eventually(async () => (await unfinishedCount(t.db)) === 0, {
      timeoutMs: 60_000,
      what: 'every job to finish',
    });
    const findings = await runFindings(
      t.db,
      NODES.map((n) => cluster.nodeLogFile(n)),
    );
    expect(findings.overQueueLimit.length).toBeGreaterThan(0);
  });

  it('broken variant (queue-limit-plan only): the database refuses the round, so nothing runs past the limit', async () => {
    const { t, cluster } = await start('queues-plan-broken', { FENCER_BREAK_GUARDS: 'queue-limit-plan' });
    await applyQueue(t.db, queue('default', 'limited', { concurrencyLimit: 2 }));
    await flow(cluster, 'limited', 6, 0, { queue: 'limited' });
    const leader = await eventually(() => cluster.leader(), { what: 'a leader' });
    await eventually(() => readFileSync(cluster.processLogFile(leader.name), 'utf8').includes('over its limits'), {
      what: 'the database to refuse a round past the limit',
    });
    const active = (
      await t.db.query(
        "SELECT count(*)::int AS n FROM assignments WHERE queue = 'limited' AND state IN ('Assigned', 'Running')",
      )
    ).rows[0].n;
    expect(active).toBeLessThanOrEqual(2);
    expect(
      await runFindings(
        t.db,
        NODES.map((n) => cluster.nodeLogFile(n)),
      ),
    ).toEqual(CLEAN);
  });

  // A cancel ends the assignment at once, but the node hears of it late (its snapshots delayed
  // while its heartbeats pass): the cancelled run keeps its queue's share until its node must
  // have stopped it, so the next job of the queue does not start on another node meanwhile (on
  // the same node, its snapshot would list the stop before the start anyway).
  it.each([{ broken: false }, { broken: true }])(
    'a cancelled run holds its queue’s share while its node may still run it (cancel-hold broken: $broken)',
    async ({ broken }) => {
      const env: Record<string, string> = { FENCER_TEST_FAULTS: '' };
      const scratch = mkdtempSync(join(tmpdir(), 'fencer-cancel-hold-'));
      env.FENCER_TEST_FAULTS = join(scratch, 'faults.json');
      setFaults(env.FENCER_TEST_FAULTS, {});
      if (broken) env.FENCER_BREAK_GUARDS = 'cancel-hold';
      const { t, cluster } = await start(`queues_cancel_${broken}`, env);
      await applyQueue(t.db, queue('default', 'one', { concurrencyLimit: 1 }));
      expect(
        await submit(
          cluster.replicaUrls,
          jobYaml('first', { queue: 'one', duration: '4s', nodeSelector: { slot: 's0' } }),
        ),
      ).toBe(201);
      const firstNode = await eventually(
        async () =>
          (await t.db.query("SELECT node FROM jobs WHERE name = 'first' AND phase = 'Running'")).rows[0]?.node as
            string | undefined,
        { what: 'first to run' },
      );
      setFaults(env.FENCER_TEST_FAULTS, { snapshots: { nodes: [firstNode], delayMs: 3000 } });
      expect(
        await submit(
          cluster.replicaUrls,
          jobYaml('second', { queue: 'one', duration: '1s', nodeSelector: { slot: 's1' } }),
        ),
      ).toBe(201);
      await eventually(
        async () =>
          (await t.db.query("SELECT 1 FROM jobs WHERE name = 'second' AND reason = 'QueueAtLimit'")).rowCount === 1,
        { what: 'second held by the limit' },
      );
      const cancelled = await adminFetch(`${cluster.replicaUrls[0]}/api/v1/namespaces/default/jobs/first/cancel`, {
        method: 'POST',
      });
      expect(cancelled.status).toBe(200);
      await eventually(
        async () =>
          (await t.db.query("SELECT 1 FROM jobs WHERE name = 'second' AND phase = 'Succeeded'")).rowCount === 1,
        { timeoutMs: 60_000, what: 'second to finish' },
      );
      // Judge by when the node really stopped the cancelled run (its stop line), not by the cancel.
      const stopped = () =>
        readFileSync(cluster.nodeLogFile(firstNode), 'utf8')
          .split('\n')
          .some((l) => l.includes('"stop"') && l.includes('default/first'));
      await eventually(stopped, { timeoutMs: 30_000, what: 'the cancelled run to stop on its node' });
      const findings = await runFindings(
        t.db,
        NODES.map((n) => cluster.nodeLogFile(n)),
      );
      if (broken) expect(findings.overQueueLimit.length).toBeGreaterThan(0);
      else expect(findings).toEqual(CLEAN);
      rmSync(scratch, { recursive: true, force: true });
    },
  );
});
