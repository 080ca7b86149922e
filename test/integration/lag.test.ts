// Lag is not loss, on a real cluster: the control plane answers the nodes' end reports far later
// than the overdue deadline (a test fault: every report served 12 s late; heartbeats on time),
// after every job of a burst was claimed. The interleaving that lost work on the old code:
//   1. each node claims its runs (on time) and runs them; each run ends, its report is sent;
//   2. the reports wait in the slow control plane past the run's end plus the slack;
//   3. job-reconcile took the silence for a lost run: ended it Lost, used an attempt, placed the
//      job again — whose claim was late too, and so on, until the job was Dead.
// Now the silence is a question to the node (a snapshot), the run stays active, the late report
// ends it: each job Succeeded on its first attempt, with one assignment, and the checker (over
// the history and the nodes' run logs) finds nothing. The broken variant (guard
// not-reported-is-loss: the old expiry) runs here too and uses attempts.
//
// And a burst that the control plane is slow to hand out (every snapshot sent 2 × the confirm
// timeout after it was read, claims answered late, heartbeats on time), on nodes that hold at most
// MAX_JOBS runs at once, with at most MAX_UNCLAIMED assignments unclaimed each. The interleaving
// that cost a job its assignment on the old code: placement commits; the snapshot that carries it
// waits in the control plane past the confirm timeout, counted from the commit; job-reconcile
// takes the placement back as Unconfirmed and places it again — and the same happens to the next
// one. Now the deadline starts when the assignment is sent: one assignment per job. Broken
// variant (confirm-at-delivery: the deadline starts at the read) takes placements back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Cluster } from '../../src/simulator/local-cluster.js';
import { DEFAULT_TIMINGS, overdueSlackMs } from '../../src/config.js';
import { check } from '../../src/checker/check.js';
import { readCheckInput } from '../../src/checker/read.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { setFaults } from '../helpers/faults.js';
import { CHANNELS } from '../../src/store/channels.js';

const TIMINGS = { ...DEFAULT_TIMINGS, confirmTimeoutMs: 1500 };
const JOBS = 12;
/** Longer than a run (3 s) plus the slack, so every end report arrives after the deadline. */
const REPORT_DELAY_MS = 3000 + overdueSlackMs(TIMINGS) + 2500;

const MAX_JOBS = 3;
const MAX_UNCLAIMED = 2;
const BURST = 18;

function lagCluster(label: string, brokenGuard?: string, burst = false) {
  const c = {} as { t: TestDatabase; cluster: Cluster; home: string; faults: string };
  beforeAll(async () => {
    c.t = await freshDatabase(label);
    c.home = mkdtempSync(join(tmpdir(), `fencer-${label}-`));
    c.faults = join(c.home, 'faults.json');
    setFaults(c.faults, {});
    c.cluster = await Cluster.start({
      replicas: 2,
      nodes: 2,
      nodeCpu: '8',
      nodeMemory: '16Gi',
      ...(burst ? { nodeMaxJobs: MAX_JOBS } : {}),
      databaseUrl: c.t.url,
      home: c.home,
      timings: TIMINGS,
      env: {
        FENCER_TEST_FAULTS: c.faults,
        ...(burst ? { FENCER_MAX_UNCLAIMED_PER_NODE: String(MAX_UNCLAIMED) } : {}),
        ...(brokenGuard ? { FENCER_BREAK_GUARDS: brokenGuard } : {}),
      },
    });
  });
  afterAll(async () => {
    await c.cluster?.stop();
    await c.t?.close();
    if (!process.env.FENCER_KEEP_TEST_HOME) rmSync(c.home, { recursive: true, force: true });
  });
  return c;
}

interface Outcome {
  phases: Record<string, number>;
  attemptsUsed: number;
  assignmentsPerJob: number[];
  clean: boolean;
}

/** The burst, the slow reports, and what became of it once every job ended. */
async function burstWithLateReports(
  c: { t: TestDatabase; cluster: Cluster; faults: string },
  broken: boolean,
): Promise<Outcome> {
  for (let i = 0; i < JOBS; i++) {
    expect(await submit(c.cluster.replicaUrls, jobYaml(`late-${i}`, { cpu: '1', memory: '1Gi', duration: '3s' }))).toBe(
      201,
    );
  }
  const running = async () =>
    (await c.t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE phase = 'Running'")).rows[0]!.n;
  await eventually(async () => (await running()) === JOBS, { what: 'every job claimed and running' });
  setFaults(c.faults, { reports: { nodes: ['*'], delayMs: REPORT_DELAY_MS } });

  if (broken) {
    // The old expiry: a run taken for lost, its job placed again.
    await eventually(async () => (await c.t.db.query('SELECT 1 FROM jobs WHERE attempt > 1')).rows.length > 0, {
      timeoutMs: 60_000,
      what: 'a job retried',
    });
  } else {
    // The question: the leader sends each node a snapshot about its runs past their end.
    const listener = new pg.Client({ connectionString: c.t.url });
    await listener.connect();
    const asked = new Set<string>();
    listener.on('notification', (n) => asked.add(n.payload ?? ''));
    await listener.query(`LISTEN ${CHANNELS.assignments}`);
    const overdue = async () =>
      (
        await c.t.db.query<{ node: string }>(
          "SELECT DISTINCT node FROM assignments WHERE state = $1 AND started_at + (duration_ms + $2::bigint) * interval '1 millisecond' < now()",
          ['Running', overdueSlackMs(TIMINGS)],
        )
      ).rows.map((r) => r.node);
    const nodes = await eventually(
      async () => {
        const late = await overdue();
        return late.length > 0 && late;
      },
      { timeoutMs: 60_000, what: 'runs past their end with no report' },
    );
    await eventually(() => nodes.every((n) => asked.has(n)), { what: 'their nodes asked about them' });
    await listener.end();
    expect(await running()).toBe(JOBS); // still active: never placed again while their nodes may run them
  }
  setFaults(c.faults, {});
  await eventually(
    async () =>
      (await c.t.db.query("SELECT 1 FROM jobs WHERE phase NOT IN ('Succeeded', 'Failed', 'Dead', 'Cancelled')")).rows
        .length === 0,
    {
      timeoutMs: 90_000,
      what: 'every job to end',
    },
  );
  return outcome(c);
}

async function outcome(c: { t: TestDatabase; cluster: Cluster }): Promise<Outcome> {
  const phases = Object.fromEntries(
    (
      await c.t.db.query<{ phase: string; n: number }>('SELECT phase, count(*)::int AS n FROM jobs GROUP BY phase')
    ).rows.map((r) => [r.phase, r.n]),
  );
  const attemptsUsed = (await c.t.db.query<{ n: number }>('SELECT coalesce(sum(attempt - 1), 0)::int AS n FROM jobs'))
    .rows[0]!.n;
  const assignmentsPerJob = (
    await c.t.db.query<{ n: number }>(
      'SELECT count(a.id)::int AS n FROM jobs j LEFT JOIN assignments a ON a.job_uid = j.uid GROUP BY j.uid',
    )
  ).rows.map((r) => r.n);
  const logs = ['node-1', 'node-2'].map((n) => c.cluster.nodeLogFile(n)).filter(existsSync);
  const report = check(await readCheckInput(c.t.db, logs));
  return {
    phases,
    attemptsUsed,
    assignmentsPerJob,
    clean: report.placedTwice.length === 0 && report.overlappingRuns.length === 0 && report.overcommitted.length === 0,
  };
}

/**
 * The most assignments any node had unclaimed at once, replaying the history's assignment rows in
 * id order. Placement is the leader's alone and reads a node's count before it adds to it, and a
 * claim only lowers it, so a claim that commits between a placement's insert and its commit can
 * make this count high, never low: at or under the bound here, it was under the bound.
 */
async function mostUnclaimed(t: TestDatabase): Promise<number> {
  const rows = (
    await t.db.query<{ node: string; from_state: string | null; to_state: string }>(
      "SELECT node, from_state, to_state FROM history WHERE entity = 'assignment' ORDER BY id",
    )
  ).rows;
  const unclaimed = new Map<string, number>();
  let most = 0;
  for (const r of rows) {
    const delta = (r.to_state === 'Assigned' ? 1 : 0) - (r.from_state === 'Assigned' ? 1 : 0);
    const now = (unclaimed.get(r.node) ?? 0) + delta;
    unclaimed.set(r.node, now);
    most = Math.max(most, now);
  }
  return most;
}

/** A burst the control plane hands out late: snapshots sent 2 × the confirm timeout after their read, claims answered late. */
async function sendBurstLate(c: { cluster: Cluster; faults: string }): Promise<void> {
  setFaults(c.faults, {
    snapshots: { nodes: ['*'], delayMs: 2 * TIMINGS.confirmTimeoutMs },
    reports: { nodes: ['*'], delayMs: TIMINGS.confirmTimeoutMs / 3 },
  });
  for (let i = 0; i < BURST; i++) {
    expect(
      await submit(c.cluster.replicaUrls, jobYaml(`burst-${i}`, { cpu: '10m', memory: '1Mi', duration: '500ms' })),
    ).toBe(201);
  }
}

async function burstSentLate(c: {
  t: TestDatabase;
  cluster: Cluster;
  faults: string;
}): Promise<Outcome & { mostUnclaimed: number }> {
  await sendBurstLate(c);
  await eventually(
    async () =>
      (await c.t.db.query("SELECT 1 FROM jobs WHERE phase NOT IN ('Succeeded', 'Failed', 'Dead', 'Cancelled')")).rows
        .length === 0,
    {
      timeoutMs: 60_000,
      what: 'every job of the burst to end',
    },
  );
  setFaults(c.faults, {});
  return { ...(await outcome(c)), mostUnclaimed: await mostUnclaimed(c.t) };
}

describe('reports answered long after the overdue deadline', () => {
  const c = lagCluster('lag');
  it('cost no attempt: every job Succeeded once, with one assignment, the checker clean', async () => {
    const outcome = await burstWithLateReports(c, false);
    expect(outcome.phases).toEqual({ Succeeded: JOBS });
    expect(outcome.attemptsUsed).toBe(0);
    expect(outcome.assignmentsPerJob).toEqual(Array(JOBS).fill(1));
    expect(outcome.clean).toBe(true);
  });
});

describe('the same with a late report taken for a lost run (not-reported-is-loss broken)', () => {
  const c = lagCluster('lag_broken', 'not-reported-is-loss');
  // Whether a retried job is also placed again depends on whether its late report lands before
  // its backoff ends (an outcome is kept for a Lost run its job still points at): attempts it is.
  it('uses attempts', async () => {
    const outcome = await burstWithLateReports(c, true);
    expect(outcome.attemptsUsed).toBeGreaterThan(0);
  });
});

describe('a burst the control plane hands out late, on nodes of a few runs at once', () => {
  const c = lagCluster('burst', undefined, true);
  it('costs each job one assignment and no attempt; no node holds more than its max jobs or its unclaimed bound', async () => {
    const outcome = await burstSentLate(c);
    expect(outcome.phases).toEqual({ Succeeded: BURST });
    expect(outcome.attemptsUsed).toBe(0);
    expect(outcome.assignmentsPerJob).toEqual(Array(BURST).fill(1));
    expect(outcome.clean).toBe(true); // the checker counts each node's runs at once against its --max-jobs too
    expect(outcome.mostUnclaimed).toBeLessThanOrEqual(MAX_UNCLAIMED);
  });
});

describe('the same with no bound on what a node has not claimed (unclaimed-bound broken)', () => {
  const c = lagCluster('burst_unbounded', 'unclaimed-bound', true);
  it('gives a node more unclaimed assignments than the bound', async () => {
    const outcome = await burstSentLate(c);
    expect(outcome.mostUnclaimed).toBeGreaterThan(MAX_UNCLAIMED);
  });
});

describe('the same with the confirm deadline started at the read (confirm-at-delivery broken)', () => {
  const c = lagCluster('burst_broken', 'confirm-at-delivery', true);
  // Every placement is taken back before its node hears of it, again and again: the burst would
  // never end. A job placed a second time is the failure.
  it('takes placements back and places them again', async () => {
    await sendBurstLate(c);
    await eventually(
      async () =>
        (await c.t.db.query('SELECT 1 FROM assignments GROUP BY job_uid HAVING count(*) > 1')).rows.length > 0,
      {
        timeoutMs: 30_000,
        what: 'a job placed a second time',
      },
    );
  });
});
