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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Cluster } from '../../src/simulator/cluster.js';
import { DEFAULT_TIMINGS, overdueSlackMs } from '../../src/config.js';
import { check } from '../../src/checker/check.js';
import { readCheckInput } from '../../src/checker/read.js';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml, submit } from '../helpers/jobs.js';
import { setFaults } from '../helpers/faults.js';

const TIMINGS = { ...DEFAULT_TIMINGS, confirmTimeoutMs: 1500 };
const JOBS = 12;
/** Longer than a run (3 s) plus the slack, so every end report arrives after the deadline. */
const REPORT_DELAY_MS = 3000 + overdueSlackMs(TIMINGS) + 2500;

function lagCluster(label: string, broken: boolean) {
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
      databaseUrl: c.t.url,
      home: c.home,
      timings: TIMINGS,
      env: { FENCER_TEST_FAULTS: c.faults, ...(broken ? { FENCER_BREAK_GUARDS: 'not-reported-is-loss' } : {}) },
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
async function burstWithLateReports(c: { t: TestDatabase; cluster: Cluster; faults: string }, broken: boolean): Promise<Outcome> {
  for (let i = 0; i < JOBS; i++) {
    expect(await submit(c.cluster.replicaUrls, jobYaml(`late-${i}`, { cpu: '1', memory: '1Gi', duration: '3s' }))).toBe(201);
  }
  const running = async () => (await c.t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE phase = 'Running'")).rows[0]!.n;
  await eventually(async () => (await running()) === JOBS, { what: 'every job claimed and running' });
  setFaults(c.faults, { reports: { nodes: ['*'], delayMs: REPORT_DELAY_MS } });

  if (broken) {
    // The old expiry: a run taken for lost, its job placed again.
    await eventually(async () => (await c.t.db.query("SELECT 1 FROM jobs WHERE attempt > 1")).rows.length > 0, { timeoutMs: 60_000, what: 'a job retried' });
  } else {
    // The question: the leader sends each node a snapshot about its runs past their end.
    const listener = new pg.Client({ connectionString: c.t.url });
    await listener.connect();
    const asked = new Set<string>();
    listener.on('notification', (n) => asked.add(n.payload ?? ''));
    await listener.query('LISTEN fencer_assignments');
    const overdue = async () =>
      (await c.t.db.query<{ node: string }>('SELECT DISTINCT node FROM assignments WHERE state = $1 AND started_at + (duration_ms + $2::bigint) * interval \'1 millisecond\' < now()', ['Running', overdueSlackMs(TIMINGS)])).rows.map((r) => r.node);
    const nodes = await eventually(async () => {
      const late = await overdue();
      return late.length > 0 && late;
    }, { timeoutMs: 60_000, what: 'runs past their end with no report' });
    await eventually(() => nodes.every((n) => asked.has(n)), { what: 'their nodes asked about them' });
    await listener.end();
    expect(await running()).toBe(JOBS); // still active: never placed again while their nodes may run them
  }
  setFaults(c.faults, {});
  await eventually(async () => (await c.t.db.query("SELECT 1 FROM jobs WHERE phase NOT IN ('Succeeded', 'Failed', 'Dead', 'Cancelled')")).rows.length === 0, {
    timeoutMs: 90_000,
    what: 'every job to end',
  });
  const phases = Object.fromEntries((await c.t.db.query<{ phase: string; n: number }>('SELECT phase, count(*)::int AS n FROM jobs GROUP BY phase')).rows.map((r) => [r.phase, r.n]));
  const attemptsUsed = (await c.t.db.query<{ n: number }>('SELECT coalesce(sum(attempt - 1), 0)::int AS n FROM jobs')).rows[0]!.n;
  const assignmentsPerJob = (await c.t.db.query<{ n: number }>('SELECT count(a.id)::int AS n FROM jobs j LEFT JOIN assignments a ON a.job_uid = j.uid GROUP BY j.uid')).rows.map((r) => r.n);
  const logs = ['node-1', 'node-2'].map((n) => c.cluster.nodeLogFile(n)).filter(existsSync);
  const report = check(await readCheckInput(c.t.db, logs));
  return { phases, attemptsUsed, assignmentsPerJob, clean: report.placedTwice.length === 0 && report.overlappingRuns.length === 0 };
}

describe('reports answered long after the overdue deadline', () => {
  const c = lagCluster('lag', false);
  it('cost no attempt: every job Succeeded once, with one assignment, the checker clean', async () => {
    const outcome = await burstWithLateReports(c, false);
    expect(outcome.phases).toEqual({ Succeeded: JOBS });
    expect(outcome.attemptsUsed).toBe(0);
    expect(outcome.assignmentsPerJob).toEqual(Array(JOBS).fill(1));
    expect(outcome.clean).toBe(true);
  });
});

describe('the same with a late report taken for a lost run (not-reported-is-loss broken)', () => {
  const c = lagCluster('lag_broken', true);
  // Whether a retried job is also placed again depends on whether its late report lands before
  // its backoff ends (an outcome is kept for a Lost run its job still points at): attempts it is.
  it('uses attempts', async () => {
    const outcome = await burstWithLateReports(c, true);
    expect(outcome.attemptsUsed).toBeGreaterThan(0);
  });
});
