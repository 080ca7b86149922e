// The failover campaign: a real cluster with jobs flowing, the leader killed or frozen N times
// at random moments (and, with faults, nodes killed, frozen and cut off, PostgreSQL restarted
// and the leader's sessions terminated), then every job waited for and the independent checker
// run over the history and the nodes' own logs.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../simulator/local-cluster.js';
import { DEFAULT_TIMINGS, selfFenceRule, type Timings } from '../config.js';
import { createPool } from '../store/db.js';
import { delay } from '../lifecycle.js';
import { CAMPAIGN_CRONJOBS, CAMPAIGN_QUEUES, JobFlow } from './job-flow.js';
import { applyQueue } from '../fair-share/store.js';
import { applyCronJob } from '../cron/store.js';
import { sql } from '../store/sql.js';
import { readLease } from '../lease/lease.js';
import { seededRandom } from '../seeded-random.js';
import { NodeDeaths, jobsOnNode, nextLeader, timeUntilRunningElsewhere } from './observe.js';
import * as faults from './campaign-faults.js';
import type { FaultOutcome } from './campaign-faults.js';
import { readCheckInput } from '../checker/read.js';
import { check, type CheckReport } from '../checker/check.js';
import { unfinishedCount } from '../store/jobs.js';

export interface CampaignOptions {
  kills: number;
  freezes: number;
  /**
   * Faults on the database's primary (kill, freeze, partition in turn), after the leader's
   * failovers; above 0 the cluster runs on HA PostgreSQL (Patroni: docs/ha.md). Default 0.
   */
  postgresFaults?: number;
  /** Also kill, freeze and cut off nodes, restart PostgreSQL and terminate the leader's sessions. */
  faults: boolean;
  /** With `faults`: one of those after every this many failovers, each kind in turn. Default 4. */
  faultEvery?: number;
  runtime: 'process' | 'docker';
  nodes: number;
  jobsPerSecond: number;
  seed: number;
  /**
   * 'whole-cluster': each failover waits until every replica is back (one failover at a time,
   * as the reference campaign ran). 'leader-and-standby': the next failover strikes as soon as
   * a leader and one standby run, while the last victim still restarts or thaws.
   */
  pace: Pace;
  timings?: Timings;
  log: (line: string) => void;
}

export type Pace = 'whole-cluster' | 'leader-and-standby';
export const PACES: readonly Pace[] = ['whole-cluster', 'leader-and-standby'];

export interface CampaignResult {
  options: Omit<CampaignOptions, 'log' | 'timings'>;
  leaseMs: number;
  killMs: number[];
  freezeMs: number[];
  faults: Record<string, number>;
  nodeRecoveryMs: number[];
  databaseResumeMs: number[];
  /** Per database fault: from the signal to a new Patroni primary, and to fencer's next placement. */
  postgresFailoverMs: number[];
  postgresDecisionMs: number[];
  wronglyDead: Array<{ node: string; at: number }>;
  rejectedOldLeaderWrites: number;
  /** Jobs not ended when the flow stopped, and how long they took to end (the backlog's drain). */
  backlog: { jobs: number; drainMs: number };
  jobsAccepted: number;
  /** workflows among the submissions, and how they closed */
  workflowsAccepted: number;
  workflows: Record<string, number>;
  report: CheckReport;
  durationMs: number;
}

export async function runCampaign(opts: CampaignOptions): Promise<CampaignResult> {
  const started = Date.now();
  const random = seededRandom(opts.seed);
  const timings = opts.timings ?? DEFAULT_TIMINGS;
  const home = mkdtempSync(join(tmpdir(), 'fencer-campaign-'));
  const log = opts.log;
  const faultEvery = opts.faultEvery ?? 4;
  log(`starting a ${opts.runtime} cluster: 3 replicas, ${opts.nodes} nodes (home ${home})`);
  const holdFile = join(home, 'hold-fenced-tx');
  const faultFile = new faults.FaultFile(join(home, 'faults.json'));
  const cluster = await Cluster.start({
    replicas: 3,
    nodes: opts.nodes,
    home,
    restart: true,
    timings,
    runtime: opts.runtime,
    env: { FENCER_TEST_HOLD_FENCED_TX: holdFile, FENCER_TEST_FAULTS: faultFile.path },
    ...((opts.postgresFaults ?? 0) > 0 ? { postgres: 'ha' as const, log } : {}),
  });
  // Every client of this run (the API client, metrics reads) acts as the cluster's admin, over TLS.
  cluster.exportClientEnv();
  const db = createPool({ databaseUrl: cluster.databaseUrl, replica: 'campaign', max: 4 });
  for (const queue of CAMPAIGN_QUEUES) await applyQueue(db, queue);
  for (const cronJob of CAMPAIGN_CRONJOBS) await applyCronJob(db, cronJob);
  const flow = new JobFlow(() => cluster.replicaUrls, opts.jobsPerSecond, random);
  const deaths = new NodeDeaths(db);
  const injected: FaultOutcome[] = [];
  const result: Omit<
    CampaignResult,
    'report' | 'jobsAccepted' | 'workflowsAccepted' | 'workflows' | 'rejectedOldLeaderWrites' | 'backlog' | 'durationMs'
  > = {
    options: {
      kills: opts.kills,
      freezes: opts.freezes,
      faults: opts.faults,
      faultEvery,
      runtime: opts.runtime,
      nodes: opts.nodes,
      jobsPerSecond: opts.jobsPerSecond,
      seed: opts.seed,
      pace: opts.pace,
      postgresFaults: opts.postgresFaults ?? 0,
    },
    leaseMs: timings.leaseMs,
    killMs: [],
    freezeMs: [],
    faults: {},
    nodeRecoveryMs: [],
    databaseResumeMs: [],
    postgresFailoverMs: [],
    postgresDecisionMs: [],
    wronglyDead: [],
  };
  const followUps: Array<Promise<void>> = [];
  let finished = false;
  try {
    flow.start();
    deaths.start();
    const plan = shuffle(
      [...Array(opts.kills).fill('kill'), ...Array(opts.freezes).fill('freeze')] as Array<'kill' | 'freeze'>,
      random,
    );
    const extras: faults.FaultKind[] = [
      'partition-node',
      'degrade-reports',
      'kill-node',
      'exhaust-pool',
      'terminate-leader-backends',
      'fail-heartbeats',
      'freeze-node',
      'late-registration',
      'restart-postgres',
    ];
    for (const [i, kind] of plan.entries()) {
      await (opts.pace === 'whole-cluster' ? waitForWholeCluster(cluster) : waitForLeaderAndStandby(cluster));
      await delay(200 + random() * 1300); // a random moment: often mid-round, sometimes mid-transaction
      const frozenFor = timings.leaseMs + 1000;
      // Every other freeze catches the leader inside a fenced transaction, holding the share lock.
      const strike = () =>
        kind === 'kill'
          ? faults.killLeader(cluster)
          : result.freezeMs.length % 2 === 1
            ? faults.freezeLeaderMidTransaction(cluster, holdFile, frozenFor)
            : faults.freezeLeader(cluster, frozenFor);
      const { before, outcome } = await strikeWhenLeaderKnown(db, cluster, strike);
      injected.push(outcome);
      const after = await nextLeader(db, before);
      const ms = after.acquired_at.getTime() - outcome.at;
      (kind === 'kill' ? result.killMs : result.freezeMs).push(ms);
      log(
        `${i + 1}/${plan.length} ${outcome.kind} ${outcome.target} (epoch ${before}) -> ${after.holder} (epoch ${after.epoch}) in ${ms} ms`,
      );
      if (outcome.kind === 'freeze-leader-mid-transaction')
        result.faults[outcome.kind] = (result.faults[outcome.kind] ?? 0) + 1;
      // A frozen leader resumes (and a killed one restarts) in the background; the pace decides
      // whether the next failover waits for it.
      followUps.push(outcome.healed);
      if (opts.faults && i % faultEvery === faultEvery - 1) {
        const extra = extras[Math.floor(i / faultEvery) % extras.length]!;
        followUps.push(
          (await injectExtra(extra, cluster, faultFile, db, random, result, injected, timings, log)).settled,
        );
      }
    }
    for (let i = 0; i < (opts.postgresFaults ?? 0); i++) {
      await waitForWholeCluster(cluster);
      await postgresFault(cluster, db, POSTGRES_FAULTS[i % POSTGRES_FAULTS.length]!, result, injected, log);
    }
    await Promise.all(followUps);
    await flow.stop();
    // Suspended (an edit: their records go on, Skipped), so that their Jobs can all finish.
    for (const cronJob of CAMPAIGN_CRONJOBS)
      await applyCronJob(db, { ...cronJob, spec: { ...cronJob.spec, suspend: true } });
    log(`${flow.accepted} jobs accepted; waiting for every job to finish`);
    const backlog = { jobs: await unfinishedCount(db), drainMs: 0 };
    const drainStarted = Date.now();
    await waitForAllFinished(db, 60_000, log);
    backlog.drainMs = Date.now() - drainStarted;
    await deaths.stop();
    result.wronglyDead = deaths.deaths.filter((d) => !explainedDeath(d, injected, timings));
    const report = check(await readCheckInput(cluster.databaseUrl, [join(home, 'nodes')]));
    const workflowRows = (await db.query<{ phase: string; n: number }>(sql('workflows/phase_counts'))).rows;
    const done: CampaignResult = {
      ...result,
      jobsAccepted: flow.accepted,
      workflowsAccepted: flow.workflowsAccepted,
      workflows: Object.fromEntries(workflowRows.map((r) => [r.phase, r.n])),
      rejectedOldLeaderWrites: countInLogs(join(home, 'logs'), 'fenced transaction rejected'),
      backlog,
      report,
      durationMs: Date.now() - started,
    };
    finished = true;
    return done;
  } finally {
    await flow.stop();
    await deaths.stop();
    await db.end();
    await cluster.stop();
    // A campaign that broke off keeps its logs: they are what explains it.
    if (process.env.FENCER_KEEP_CAMPAIGN_HOME || !finished) log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
}

async function injectExtra(
  kind: faults.FaultKind,
  cluster: Cluster,
  faultFile: faults.FaultFile,
  db: ReturnType<typeof createPool>,
  random: () => number,
  result: Pick<CampaignResult, 'faults' | 'nodeRecoveryMs' | 'databaseResumeMs'>,
  injected: FaultOutcome[],
  timings: Timings,
  log: (line: string) => void,
): Promise<{ settled: Promise<void> }> {
  const nodes = cluster.nodeNames.filter((n) => cluster.isRunning(n) && !cluster.isFrozen(n));
  const node = nodes[Math.floor(random() * nodes.length)]!;
  result.faults[kind] = (result.faults[kind] ?? 0) + 1;
  let outcome: FaultOutcome;
  let followUp: Promise<void> = Promise.resolve();
  switch (kind) {
    case 'kill-node': {
      const held = await jobsOnNode(db, node);
      outcome = await faults.killNode(cluster, node);
      followUp = timeUntilRunningElsewhere(db, node, held, outcome.at).then((ms) => {
        if (ms !== null) result.nodeRecoveryMs.push(ms);
      });
      break;
    }
    case 'partition-node':
      // Longer than the dead timeout: the node must fence itself, then be declared dead.
      outcome = await faults.partitionNode(cluster, node, timings.deadAfterSilentMs + 2000);
      break;
    case 'freeze-node':
      // Well short of the self-fence: a frozen agent cannot stop anything (its jobs, as real
      // containers would, go on), so a longer freeze is a run-twice window by nature; this one
      // must cost nothing at all.
      outcome = await faults.freezeNode(cluster, node, Math.max(500, Math.round(selfFenceRule(timings).silentMs / 2)));
      break;
    case 'terminate-leader-backends':
      outcome = await faults.terminateLeaderBackends(cluster);
      break;
    case 'degrade-reports':
      // Longer than the confirm timeout: the node's claims come too late and must never run.
      outcome = await faults.degradeReports(faultFile, node, timings.confirmTimeoutMs + 1000);
      break;
    case 'exhaust-pool': {
      // One replica, or every one (the nodes' heartbeats have a pool of their own).
      const replica = random() < 0.5 ? '*' : cluster.replicaNames[Math.floor(random() * cluster.replicaNames.length)]!;
      outcome = await faults.exhaustPool(faultFile, replica, 3000);
      break;
    }
    case 'fail-heartbeats':
      // Longer than the dead timeout: the node must fence itself (its reports still pass), then be declared dead.
      outcome = await faults.failHeartbeats(faultFile, node, timings.deadAfterSilentMs + 2000);
      break;
    case 'late-registration':
      outcome = await faults.lateRegistration(cluster, node);
      break;
    case 'restart-postgres': {
      outcome = await faults.restartPostgres(cluster);
      const answeredAt = Date.now();
      followUp = firstDecisionAfter(db, answeredAt).then((ms) => {
        if (ms !== null) result.databaseResumeMs.push(ms);
      });
      break;
    }
    default:
      throw new Error(`unknown fault ${kind}`);
  }
  injected.push(outcome);
  log(`   fault: ${kind} ${outcome.target}`);
  // Measurements and healing go on in the background while the campaign continues.
  return { settled: Promise.all([followUp, outcome.healed]).then(() => undefined) };
}

/** A node death the campaign caused: the node was killed, frozen or cut off shortly before. */
function explainedDeath(death: { node: string; at: number }, injected: FaultOutcome[], timings: Timings): boolean {
  return injected.some(
    (f) =>
      f.target === death.node && death.at >= f.at - 1000 && death.at <= f.at + timings.deadAfterSilentMs * 3 + 10_000,
  );
}

const POSTGRES_FAULTS = ['kill', 'freeze', 'partition'] as const;

/**
 * One fault on the HA database's primary while jobs flow: measures the time to a new Patroni
 * primary and to fencer's next placement, and heals a freeze or partition once a new primary
 * leads (the old member then rejoins as a standby). Returns when the old member is a standby again.
 */
async function postgresFault(
  cluster: Cluster,
  db: ReturnType<typeof createPool>,
  verb: (typeof POSTGRES_FAULTS)[number],
  result: Pick<CampaignResult, 'faults' | 'postgresFailoverMs' | 'postgresDecisionMs'>,
  injected: FaultOutcome[],
  log: (line: string) => void,
): Promise<void> {
  const kind = `${verb}-postgres-primary`;
  result.faults[kind] = (result.faults[kind] ?? 0) + 1;
  const action = await cluster.postgresFault(verb);
  // Listed among the faults injected; it explains no node's death (its target is a database member).
  injected.push({
    kind: 'restart-postgres',
    target: action.member,
    at: action.signalledAt,
    epoch: null,
    healed: Promise.resolve(),
  });
  const deadline = action.signalledAt + 180_000;
  let promoted: string | undefined;
  while (Date.now() < deadline) {
    const now = await cluster.postgresPrimary().catch(() => null);
    if (now && now.name !== action.member) {
      promoted = now.name;
      break;
    }
    await delay(100);
  }
  if (!promoted) throw new Error(`${kind}: no new primary within 180 s`);
  result.postgresFailoverMs.push(Date.now() - action.signalledAt);
  if (verb !== 'kill') cluster.resumePostgres(action.member, verb);
  const decisionMs = await firstDecisionAfter(db, action.signalledAt, 180_000);
  if (decisionMs !== null) result.postgresDecisionMs.push(decisionMs);
  log(`   fault: ${kind} ${action.member} -> primary ${promoted}; next placement after ${decisionMs ?? '(none)'} ms`);
  // The old member back as a standby (a killed one restarts after the ttl), so the next fault has a synchronous standby.
  while (Date.now() < deadline + 120_000) {
    if ((await cluster.ha!.syncStandbys().catch(() => [])).length > 0 && (await cluster.ha!.runningMembers()) === 3)
      return;
    await delay(250);
  }
  throw new Error(`${kind}: ${action.member} did not rejoin`);
}

async function firstDecisionAfter(
  db: ReturnType<typeof createPool>,
  since: number,
  timeoutMs = 60_000,
): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const row = await db.query<{ at: Date }>(sql('chaos/first_placement_after'), [since]).then(
      (r) => r.rows[0],
      () => undefined,
    );
    if (row?.at) return row.at.getTime() - since;
    await delay(100);
  }
  return null;
}

async function currentEpoch(db: ReturnType<typeof createPool>): Promise<number> {
  for (;;) {
    const row = await readLease(db).catch(() => undefined);
    if (row?.holder && !row.free) return row.epoch;
    await delay(20);
  }
}

/**
 * Finding the leader to strike goes through the status endpoint, which a replica busy taking
 * over may not answer in time: nothing was struck then, so look again rather than give up.
 */
async function strikeWhenLeaderKnown(
  db: ReturnType<typeof createPool>,
  cluster: Cluster,
  strike: () => Promise<FaultOutcome>,
): Promise<{ before: number; outcome: FaultOutcome }> {
  for (let attempt = 1; ; attempt++) {
    const before = await currentEpoch(db);
    try {
      return { before, outcome: await strike() };
    } catch (err) {
      if (attempt >= 20 || !/no replica (answered|leads)/.test((err as Error).message)) throw err;
      await delay(250);
      await waitForLeaderAndStandby(cluster);
    }
  }
}

/** Every replica running, not frozen and alive, and a leader among them. */
async function waitForWholeCluster(cluster: Cluster): Promise<void> {
  const deadline = Date.now() + 60_000;
  let unanswered = '';
  for (;;) {
    const everyoneUp = cluster.replicaNames.every((n) => cluster.isRunning(n) && !cluster.isFrozen(n));
    const status = everyoneUp
      ? await cluster.status().then(
          (answer) => ((unanswered = ''), answer),
          (err: Error) => ((unanswered = err.message), null),
        )
      : null;
    if (status?.leader && status.replicas.filter((r) => r.alive).length >= cluster.replicaNames.length) return;
    if (Date.now() > deadline) {
      const state = cluster.replicaNames.map((n) => {
        const seen = status?.replicas.find((r) => r.name === n);
        return `${n} ${cluster.isRunning(n) ? 'running' : 'not running'}${cluster.isFrozen(n) ? ', frozen' : ''}${seen ? (seen.alive ? ', alive' : ', not alive') : ', not in status'}`;
      });
      throw new Error(
        `the cluster did not come back to full strength within 60 s (leader ${status?.leader ?? 'unknown'}; ${state.join('; ')}${unanswered ? `; status: ${unanswered}` : ''})`,
      );
    }
    await delay(50);
  }
}

/** A leader, and at least one other replica running (not frozen) that could take over. */
async function waitForLeaderAndStandby(cluster: Cluster): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = cluster.replicaNames.filter((n) => cluster.isRunning(n) && !cluster.isFrozen(n));
    const status = up.length >= 2 ? await cluster.status().catch(() => null) : null;
    const aliveUp = status ? status.replicas.filter((r) => r.alive && up.includes(r.name)) : [];
    if (status?.leader && up.includes(status.leader) && aliveUp.length >= 2) return;
    if (Date.now() > deadline) throw new Error('no leader with a standby within 60 s');
    await delay(50);
  }
}

/**
 * Waits until every job has ended. What it judges is progress, not the backlog's length: the
 * backlog left by a run of failovers drains at the limited queues' pace and grows with the
 * machine's slowness, but while jobs keep ending nothing is stuck. It fails once no job has ended
 * for `stallMs`, naming the jobs left.
 */
async function waitForAllFinished(
  db: ReturnType<typeof createPool>,
  stallMs: number,
  log: (line: string) => void,
): Promise<void> {
  let least = Number.POSITIVE_INFINITY;
  let progressAt = Date.now();
  let loggedAt = Date.now();
  for (;;) {
    const n = await unfinishedCount(db).catch(() => undefined);
    if (n === 0) return;
    if (n !== undefined && n < least) {
      least = n;
      progressAt = Date.now();
    }
    if (Date.now() - loggedAt >= 15_000) {
      loggedAt = Date.now();
      const rows = await db.query<{ queue: string; phase: string; jobs: number; holders: number; holder_cpu: string }>(
        sql('chaos/drain_progress'),
      );
      log(
        `   ${n ?? '?'} unfinished: ${rows.rows.map((r) => `${r.queue}/${r.phase} ${r.jobs} (holding ${r.holders}, ${r.holder_cpu}m)`).join(', ')}`,
      );
    }
    if (Date.now() - progressAt > stallMs) {
      const stuck = await db.query(sql('chaos/unfinished_jobs')).then(
        (r) => JSON.stringify(r.rows),
        () => '?',
      );
      throw new Error(`${n ?? '?'} jobs still unfinished, none ended for ${stallMs} ms: ${stuck}`);
    }
    await delay(250);
  }
}

function countInLogs(dir: string, needle: string): number {
  let n = 0;
  for (const file of readdirSync(dir)) {
    if (!file.startsWith('replica-')) continue;
    n += readFileSync(join(dir, file), 'utf8').split(needle).length - 1;
  }
  return n;
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
