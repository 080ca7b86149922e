// The cron lateness benchmark: a real cluster (3 replicas, nodes as processes) with CronJobs firing
// every second; first a steady stretch, then one with the leader killed and frozen in turn. For
// every occurrence: how late it was fired (its record's database time minus its scheduled time)
// and how late its Job started (first Running row). At the end the CronJobs are suspended, every
// Job finishes, and the checker reads the history, the occurrence records and the nodes' logs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../config.js';
import { createPool } from '../store/db.js';
import { delay } from '../lifecycle.js';
import { unfinishedCount } from '../store/jobs.js';
import { applyCronJob } from '../cron/store.js';
import { sql } from '../store/sql.js';
import { validateCronJob } from '../api/validation/cronjob.js';
import { parseManifests } from '../api/validation/manifest.js';
import { freezeLeader, killLeader } from '../chaos/campaign-faults.js';
import { nextLeader } from '../chaos/observe.js';
import { check, type CheckReport } from '../checker/check.js';
import { readCheckInput } from '../checker/read.js';
import type { CronJobRequest } from '../domain/resources.js';

export interface CronLatenessOptions {
  cronJobs: number;
  nodes: number;
  steadySeconds: number;
  failovers: number;
  /** Between two failovers, and after the last. */
  failoverGapSeconds: number;
  log: (line: string) => void;
}

export interface Occurrence {
  outcome: 'Fired' | 'Skipped';
  reason: string | null;
  scheduled: number;
  handled: number;
  started: number | null;
}

export interface CronLatenessResult {
  steady: Occurrence[];
  failover: Occurrence[];
  /** the failovers: kind and time to the next leader */
  takeovers: Array<{ kind: 'kill' | 'freeze'; ms: number }>;
  report: CheckReport;
  leaseMs: number;
}

function cronJob(i: number): CronJobRequest {
  const yaml = `apiVersion: fencer.dev/v1
kind: CronJob
metadata: { name: every-second-${i} }
spec:
  schedule: "* * * * * *"
  timeZone: ${['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe'][i % 4]}
  catchUp: all
  jobTemplate:
    spec: { resources: { cpu: 100m, memory: 64Mi }, duration: 200ms }
`;
  return validateCronJob(parseManifests(yaml)[0]!);
}

export async function runCronLatenessBench(opts: CronLatenessOptions): Promise<CronLatenessResult> {
  const home = mkdtempSync(join(tmpdir(), 'fencer-bench-cron-'));
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
  try {
    const cronJobs = Array.from({ length: opts.cronJobs }, (_, i) => cronJob(i));
    for (const c of cronJobs) await applyCronJob(db, c);
    const steadyFrom = Date.now() + 2000; // the first second after creation is not steady yet
    await delay(opts.steadySeconds * 1000 + 2000);
    const failoverFrom = Date.now();
    const takeovers: CronLatenessResult['takeovers'] = [];
    for (let i = 0; i < opts.failovers; i++) {
      const kind = i % 2 === 0 ? 'kill' : 'freeze';
      const outcome =
        kind === 'kill' ? await killLeader(cluster) : await freezeLeader(cluster, DEFAULT_TIMINGS.leaseMs + 1000);
      const after = await nextLeader(db, outcome.epoch ?? 0);
      takeovers.push({ kind, ms: after.acquired_at.getTime() - outcome.at });
      opts.log(
        `${i + 1}/${opts.failovers} ${kind} ${outcome.target} -> ${after.holder} in ${after.acquired_at.getTime() - outcome.at} ms`,
      );
      await outcome.healed;
      await delay(opts.failoverGapSeconds * 1000);
    }
    const failoverUntil = Date.now();
    for (const c of cronJobs) await applyCronJob(db, { ...c, spec: { ...c.spec, suspend: true } });
    for (let waited = 0; (await unfinishedCount(db)) > 0 && waited < 120_000; waited += 500) await delay(500);
    const rows = (await db.query<Occurrence>(sql('bench/cron_lateness'))).rows;
    const report = check(await readCheckInput(cluster.databaseUrl, [join(home, 'nodes')]));
    const within = (from: number, until: number) => rows.filter((r) => r.scheduled >= from && r.scheduled < until);
    return {
      steady: within(steadyFrom, failoverFrom),
      failover: within(failoverFrom, failoverUntil),
      takeovers,
      report,
      leaseMs: DEFAULT_TIMINGS.leaseMs,
    };
  } finally {
    await db.end();
    await cluster.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
