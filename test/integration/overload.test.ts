// Never run twice, also under overload: a control plane that is slow rather than dead. Real
// replicas and agents; faults injected per path and per node (src/testing/overload-faults.ts): reports answered
// 503 while heartbeats pass, snapshots delivered late while keepalives flow, heartbeats refused
// while reports pass. The verdict is the checker's, over the history and the nodes' own run logs.
// Each scenario also runs with the guard that closes it broken (src/testing/broken-guards.ts), where the
// checker must find the two runs at once: the proof that the scenario can fail. A node cut off
// for good is here too, with the self-fence broken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../../src/config.js';
import { check } from '../../src/checker/check.js';
import { readCheckInput } from '../../src/checker/read.js';
import type { BreakableGuard } from '../../src/testing/broken-guards.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { setFaults } from '../helpers/faults.js';
import { delay } from '../../src/lifecycle.js';
import { CHANNELS } from '../../src/store/channels.js';

const CONFIRM_TIMEOUT_MS = 1500;

/** A cluster of 2 replicas and 2 nodes with the faults file; node-1 alone in pool "default". */
function overloadCluster(label: string, broken: BreakableGuard | null) {
  const c = {} as { t: TestDatabase; cluster: Cluster; home: string; faults: string };
  beforeAll(async () => {
    c.t = await freshDatabase(label);
    c.home = mkdtempSync(join(tmpdir(), `fencer-${label}-`));
    c.faults = join(c.home, 'faults.json');
    setFaults(c.faults, {});
    c.cluster = await Cluster.start({
      replicas: 2,
      nodes: 2,
      nodeCpu: '2',
      nodeMemory: '4Gi',
      nodeLabels: (i) => ({ pool: i === 0 ? 'default' : 'spare' }),
      databaseUrl: c.t.url,
      home: c.home,
      timings: { ...DEFAULT_TIMINGS, confirmTimeoutMs: CONFIRM_TIMEOUT_MS },
      env: { FENCER_TEST_FAULTS: c.faults, ...(broken ? { FENCER_BREAK_GUARDS: broken } : {}) },
    });
  });
  afterAll(async () => {
    await c.cluster?.stop();
    await c.t?.close();
    if (!process.env.FENCER_KEEP_TEST_HOME) rmSync(c.home, { recursive: true, force: true });
    else console.log(`cluster home kept: ${c.home}`);
  });
  return c;
}

function nodeLog(cluster: Cluster, node: string): Array<Record<string, any>> {
  const file = cluster.nodeLogFile(node);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function verdict(c: { t: TestDatabase; cluster: Cluster }) {
  const logs = ['node-1', 'node-2'].map((n) => c.cluster.nodeLogFile(n)).filter(existsSync);
  return check(await readCheckInput(c.t.db, logs));
}

// The retry after node-1's death goes out at once, as it did before retries waited a backoff: the
// question is what node-1 does meanwhile, not how long the retry waits (a wait would only hide a
// broken guard for as long as it lasts).
const NO_BACKOFF = '  backoff: { base: 1ms, cap: 1ms }\n';

const jobPhase = async (t: TestDatabase, name: string) =>
  (await t.db.query('SELECT phase FROM jobs WHERE name = $1', [name])).rows[0]?.phase;

/**
 * node-1 cannot get its start through (reports answered 503) and hears of everything late
 * (snapshots delivered long after they were read), while its heartbeats and keepalives pass: the
 * confirm timeout gives the job to node-2. node-1 hears of the assignment while node-2 runs it
 * (the lag exceeds the time node-2 needs to get it; the run outlasts the lag). Returns the
 * checker's overlapping runs.
 */
async function lateStart(c: { t: TestDatabase; cluster: Cluster; faults: string }) {
  setFaults(c.faults, {
    reports: { nodes: ['node-1'], status: 503 },
    snapshots: { nodes: ['node-1'], delayMs: 4 * CONFIRM_TIMEOUT_MS },
  });
  // node-1's stream is busy with a late snapshot when the assignment comes (replicas reread the
  // faults within 50 ms; the NOTIFY starts a read, given a moment to finish): node-1 must still
  // hear of the assignment, late.
  await delay(250);
  await c.t.db.query('SELECT pg_notify($1, $2)', [CHANNELS.assignments, 'node-1']);
  await delay(500);
  expect(
    await submit(
      c.cluster.replicaUrls,
      jobYaml('slow-start', { cpu: '1', memory: '1Gi', duration: '8s', nodeSelector: { pool: 'default' } }),
    ),
  ).toBe(201);
  const first = await eventually(
    async () =>
      (
        await c.t.db.query<{ id: string; node: string }>(
          "SELECT a.id, a.node FROM assignments a JOIN jobs j ON j.uid = a.job_uid WHERE j.name = 'slow-start'",
        )
      ).rows[0] ?? null,
    { what: 'the first placement' },
  );
  expect(first.node).toBe('node-1'); // the only node of its pool
  // The retry goes to node-2, as moving a node between pools would: the question is what node-1
  // does with the assignment it hears of late.
  await c.t.db.query(
    `UPDATE nodes SET labels = jsonb_build_object('pool', CASE name WHEN 'node-1' THEN 'spare' ELSE 'default' END)`,
  );
  await eventually(async () => (await jobPhase(c.t, 'slow-start')) === 'Succeeded', {
    timeoutMs: 30_000,
    what: 'the job to succeed',
  });
  // Lift the faults and wait until node-1 decided (a stop, or a refusal, of that assignment).
  setFaults(c.faults, {});
  await eventually(() => nodeLog(c.cluster, 'node-1').some((l) => l.assignment === first.id && l.event !== 'start'), {
    timeoutMs: 20_000,
    what: 'node-1 to decide about its late assignment',
  });
  const report = await verdict(c);
  expect(report.placedTwice).toEqual([]);
  return report.overlappingRuns;
}

/**
 * node-1 runs a long job and a stream of short ones (their claims and finishes keep reaching the
 * control plane); its heartbeats are refused and its snapshots come late. The death rule reads
 * heartbeats only. Returns the checker's overlapping runs and whether node-1 fenced itself.
 */
async function heartbeatsFail(c: { t: TestDatabase; cluster: Cluster; faults: string }) {
  await c.t.db.query(
    `UPDATE nodes SET labels = jsonb_build_object('pool', CASE name WHEN 'node-1' THEN 'default' ELSE 'spare' END)`,
  );
  expect(
    await submit(
      c.cluster.replicaUrls,
      jobYaml('long-run', { cpu: '1', memory: '1Gi', duration: '12s', nodeSelector: { pool: 'default' } }) + NO_BACKOFF,
    ),
  ).toBe(201);
  await eventually(
    () => nodeLog(c.cluster, 'node-1').some((l) => l.event === 'start' && l.job === 'default/long-run'),
    { what: 'node-1 to run long-run' },
  );
  setFaults(c.faults, {
    heartbeats: { nodes: ['node-1'], status: 503 },
    snapshots: { nodes: ['node-1'], delayMs: 2000 },
  });
  await c.t.db.query('UPDATE nodes SET labels = \'{"pool": "default"}\' WHERE name = \'node-2\''); // a home for the retry
  const dead = async () =>
    (await c.t.db.query("SELECT state FROM nodes WHERE name = 'node-1'")).rows[0].state === 'Dead';
  for (let i = 0; !(await dead()); i++) {
    expect(
      await submit(
        c.cluster.replicaUrls,
        jobYaml(`short-${i}`, { cpu: '250m', memory: '128Mi', duration: '300ms', nodeSelector: { pool: 'default' } }),
      ),
    ).toBe(201);
    await eventually(async () => (await jobPhase(c.t, `short-${i}`)) !== 'Pending' || (await dead()), {
      what: `short-${i} to be placed`,
    });
    if (i > 200) throw new Error('node-1 was never declared dead');
  }
  // Faults stay until the retry runs: lifted earlier, node-1's next heartbeat would get 410 and
  // stop the job first, and a broken guard would go unseen.
  await eventually(
    () => nodeLog(c.cluster, 'node-2').some((l) => l.event === 'start' && l.job === 'default/long-run'),
    { what: 'node-2 to run long-run' },
  );
  setFaults(c.faults, {});
  await eventually(async () => (await jobPhase(c.t, 'long-run')) === 'Succeeded', {
    timeoutMs: 40_000,
    what: 'long-run to succeed',
  });
  const fenced = nodeLog(c.cluster, 'node-1').some(
    (l) => l.event === 'stop' && l.job === 'default/long-run' && l.reason === 'self-fence',
  );
  return { overlapping: (await verdict(c)).overlappingRuns, fenced };
}

/**
 * node-1 is cut off from every replica (its proxy frozen) while it runs a long job, until the job
 * runs on node-2; then it heals. Returns the checker's overlapping runs and whether it fenced itself.
 */
async function cutOff(c: { t: TestDatabase; cluster: Cluster }) {
  await c.t.db.query(
    `UPDATE nodes SET labels = jsonb_build_object('pool', CASE name WHEN 'node-1' THEN 'default' ELSE 'spare' END)`,
  );
  expect(
    await submit(
      c.cluster.replicaUrls,
      jobYaml('cut-off', { cpu: '1', memory: '1Gi', duration: '12s', nodeSelector: { pool: 'default' } }) + NO_BACKOFF,
    ),
  ).toBe(201);
  await eventually(() => nodeLog(c.cluster, 'node-1').some((l) => l.event === 'start' && l.job === 'default/cut-off'), {
    what: 'node-1 to run cut-off',
  });
  await c.cluster.partition('node-1');
  await c.t.db.query('UPDATE nodes SET labels = \'{"pool": "default"}\' WHERE name = \'node-2\'');
  await eventually(() => nodeLog(c.cluster, 'node-2').some((l) => l.event === 'start' && l.job === 'default/cut-off'), {
    timeoutMs: 30_000,
    what: 'node-2 to run cut-off',
  });
  await c.cluster.heal('node-1');
  await eventually(async () => (await jobPhase(c.t, 'cut-off')) === 'Succeeded', {
    timeoutMs: 30_000,
    what: 'cut-off to succeed',
  });
  const fenced = nodeLog(c.cluster, 'node-1').some(
    (l) => l.event === 'stop' && l.job === 'default/cut-off' && l.reason === 'self-fence',
  );
  return { overlapping: (await verdict(c)).overlappingRuns, fenced };
}

describe('an overloaded control plane', () => {
  const c = overloadCluster('overload', null);

  it('never has a job run on two nodes at once when a node cannot get its start through in time', async () => {
    expect(await lateStart(c)).toEqual([]);
  });

  it('a node whose heartbeats fail while its reports pass fences itself before it is declared dead', async () => {
    const { overlapping, fenced } = await heartbeatsFail(c);
    expect(overlapping).toEqual([]);
    expect(fenced).toBe(true);
  });

  it('a node cut off from every replica fences itself before its job runs elsewhere', async () => {
    const { overlapping, fenced } = await cutOff(c);
    expect(overlapping).toEqual([]);
    expect(fenced).toBe(true);
  });

  it('a node killed after a run completed, before its report got through, reports it when it comes back: the job runs once', async () => {
    await c.t.db.query(
      `UPDATE nodes SET labels = jsonb_build_object('pool', CASE name WHEN 'node-1' THEN 'default' ELSE 'spare' END)`,
    );
    expect(
      await submit(
        c.cluster.replicaUrls,
        jobYaml('reported-late', { cpu: '1', memory: '1Gi', duration: '1s', nodeSelector: { pool: 'default' } }),
      ),
    ).toBe(201);
    const ran = (event: string, reason?: string) => () =>
      nodeLog(c.cluster, 'node-1').some(
        (l) => l.job === 'default/reported-late' && l.event === event && (reason === undefined || l.reason === reason),
      );
    await eventually(ran('start'), { what: 'node-1 to run reported-late' });
    setFaults(c.faults, { reports: { nodes: ['node-1'], status: 503 } });
    await eventually(ran('stop', 'completed'), { what: 'the run to complete' });
    await c.cluster.kill('node-1');
    await eventually(() => !c.cluster.isRunning('node-1'), { what: 'node-1 to be gone' });
    setFaults(c.faults, {});
    await c.cluster.startNode('node-1');
    await eventually(async () => (await jobPhase(c.t, 'reported-late')) === 'Succeeded', {
      timeoutMs: 30_000,
      what: 'reported-late to succeed',
    });
    const starts = ['node-1', 'node-2']
      .flatMap((n) => nodeLog(c.cluster, n))
      .filter((l) => l.event === 'start' && l.job === 'default/reported-late');
    expect(starts).toHaveLength(1);
    expect((await c.t.db.query("SELECT attempt FROM jobs WHERE name = 'reported-late'")).rows[0].attempt).toBe(1);
  });
});

describe('a control plane slower than a request timeout', () => {
  const c = overloadCluster('overload_slow_heartbeats', null);

  // Every heartbeat of node-1 is recorded 1.5 s after it arrives (a liveness pool queue, a slow
  // commit), on every replica. Each answer comes after the agent's request timeout but well
  // inside the silence window: the node must count them and keep its job, not fence itself while
  // the control plane counts it alive.
  it('a node whose heartbeats are answered late keeps running its job: the late answers count', async () => {
    expect(
      await submit(
        c.cluster.replicaUrls,
        jobYaml('slow-beats', { cpu: '1', memory: '1Gi', duration: '10s', nodeSelector: { pool: 'default' } }),
      ),
    ).toBe(201);
    const lines = () => nodeLog(c.cluster, 'node-1').filter((l) => l.job === 'default/slow-beats');
    await eventually(() => lines().some((l) => l.event === 'start'), { what: 'node-1 to run slow-beats' });
    setFaults(c.faults, { heartbeats: { nodes: ['node-1'], delayMs: 1500 } });
    try {
      await eventually(async () => (await jobPhase(c.t, 'slow-beats')) === 'Succeeded', {
        timeoutMs: 30_000,
        what: 'slow-beats to succeed',
      });
    } finally {
      setFaults(c.faults, {});
    }
    expect(lines().map((l) => `${l.event} ${l.reason ?? ''}`.trim())).toEqual(['start', 'stop completed']);
    expect((await verdict(c)).overlappingRuns).toEqual([]);
  });
});

describe('the same with the node running before its claim is committed (claim-first broken)', () => {
  const c = overloadCluster('overload_claim_first', 'claim-first');

  it('runs the job on two nodes at once', async () => {
    expect((await lateStart(c)).map((o) => o.job)).toEqual(['default/slow-start']);
  });
});

describe('the same with any answered request counted as a heartbeat (fence-on-heartbeats broken)', () => {
  const c = overloadCluster('overload_fence_on_heartbeats', 'fence-on-heartbeats');

  it('does not fence the node, and the job runs on two nodes at once', async () => {
    const { overlapping, fenced } = await heartbeatsFail(c);
    expect(fenced).toBe(false);
    expect(overlapping.map((o) => o.job)).toEqual(['default/long-run']);
  });
});

describe('the same with the self-fence off (self-fence broken)', () => {
  const c = overloadCluster('overload_self_fence', 'self-fence');

  it('keeps running the job it was cut off with, while it runs elsewhere', async () => {
    const { overlapping, fenced } = await cutOff(c);
    expect(fenced).toBe(false);
    expect(overlapping.map((o) => o.job)).toEqual(['default/cut-off']);
  });
});
