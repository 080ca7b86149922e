// The failover benchmark: a real cluster of processes with jobs flowing, the leader SIGKILLed
// and SIGSTOPped again and again; for each failover, the time from the signal to the moment
// the database shows the next epoch's holder (lease.acquired_at, the database's clock on this
// same machine). At the end every job must finish and none may have been placed twice.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Cluster } from '../simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../config.js';
import { jobPhases, jobsPlacedTwice } from '../store/history.js';
import { createPool } from '../store/db.js';
import { readLease } from '../lease/lease.js';
import { delay, eventually } from '../lifecycle.js';
import { unfinishedCount } from '../store/jobs.js';

export interface FailoverOptions {
  kills: number;
  freezes: number;
  nodes: number;
  /** How long a frozen leader stays frozen. */
  freezeMs: number;
  log: (line: string) => void;
}

export interface FailoverResult {
  killMs: number[];
  freezeMs: number[];
  jobsSubmitted: number;
  phases: Record<string, number>;
  placedTwice: string[];
  leaseMs: number;
}

function jobYaml(name: string): string {
  return `apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  name: ${name}\nspec:\n  resources:\n    cpu: 250m\n    memory: 128Mi\n  duration: 1s\n`;
}

export async function runFailoverBench(opts: FailoverOptions): Promise<FailoverResult> {
  const home = mkdtempSync(join(tmpdir(), 'fencer-bench-failover-'));
  const cluster = await Cluster.start({
    replicas: 3,
    nodes: opts.nodes,
    home,
    restart: true,
    timings: DEFAULT_TIMINGS,
  });
  // Every client of this run (the API client, metrics reads) acts as the cluster's admin, over TLS.
  cluster.exportClientEnv();
  const db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'bench', max: 2 });
  let submitted = 0;
  let flowing = true;
  const flow = (async () => {
    while (flowing) {
      // 200 too: an earlier send of this job got through but its answer was lost.
      const accepted = await cluster
        .client({ timeoutMs: 1000, retryLaterForMs: 0 })
        .submitJobs(jobYaml(`job-${submitted}`))
        .then(
          () => true,
          () => false,
        );
      if (accepted) submitted++;
      await delay(50);
    }
  })();
  const result: FailoverResult = {
    killMs: [],
    freezeMs: [],
    jobsSubmitted: 0,
    phases: {},
    placedTwice: [],
    leaseMs: DEFAULT_TIMINGS.leaseMs,
  };
  try {
    const plan = [...Array(opts.kills).fill('kill'), ...Array(opts.freezes).fill('freeze')] as Array<'kill' | 'freeze'>;
    for (const [i, kind] of plan.entries()) {
      const before = await currentLeader(db);
      const action = kind === 'kill' ? await cluster.kill(before.holder) : await cluster.freeze(before.holder);
      const signalledAt = action.signalledAt!;
      const after = await nextLeader(db, before.epoch);
      const ms = after.acquired_at.getTime() - signalledAt;
      (kind === 'kill' ? result.killMs : result.freezeMs).push(ms);
      opts.log(
        `${i + 1}/${plan.length} ${kind} ${before.holder} (epoch ${before.epoch}) -> ${after.holder} (epoch ${after.epoch}) in ${ms} ms`,
      );
      if (kind === 'freeze') {
        await delay(Math.max(0, opts.freezeMs - (Date.now() - signalledAt)));
        await cluster.resume(before.holder);
      }
      // Let the restarted or resumed replica rejoin as a standby before the next failover.
      await waitForReplicas(cluster, 3);
    }
    flowing = false;
    await flow;
    result.jobsSubmitted = submitted;
    await eventually(async () => (await unfinished(db)) === 0, {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: 'every job finished',
    });
    result.phases = await jobPhases(db);
    result.placedTwice = await jobsPlacedTwice(db);
  } finally {
    flowing = false;
    await db.end();
    await cluster.stop();
    rmSync(home, { recursive: true, force: true });
  }
  return result;
}

interface LeaseRow {
  holder: string;
  epoch: number;
  acquired_at: Date;
}

async function currentLeader(db: pg.Pool): Promise<LeaseRow> {
  for (;;) {
    const row = await readLease(db);
    if (row.holder && !row.free) return row as LeaseRow;
    await delay(20);
  }
}

async function nextLeader(db: pg.Pool, epoch: number): Promise<LeaseRow> {
  for (;;) {
    const row = await readLease(db);
    if (row.holder && row.epoch > epoch) return row as LeaseRow;
    await delay(10);
  }
}

async function waitForReplicas(cluster: Cluster, count: number): Promise<void> {
  await eventually(
    async () => {
      const status = await cluster.status().catch(() => null);
      return (
        (status?.replicas.filter((r) => r.alive).length ?? 0) >= count &&
        cluster.replicaNames.every((n) => cluster.isRunning(n) && !cluster.isFrozen(n))
      );
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `${count} replicas alive` },
  );
  await delay(500);
}

async function unfinished(db: pg.Pool): Promise<number> {
  return unfinishedCount(db);
}
