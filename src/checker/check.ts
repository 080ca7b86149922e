// The chaos checker's verdict, from two sources only: the control plane's append-only history
// table and the nodes' run logs (docs/agent-log.md). Pure: no database, no files, no clock.
//
// It proves the promises of docs/architecture.md (its promises, numbered as there) after a run:
//   1. never placed twice   — replaying each job's assignment rows in history order (at, id),
//                             no job ever has two active (Assigned/Running) assignments;
//   5. runs never overlap   — no two runs (run-log `start` lines) of a job overlap in wall time;
//      nodes never overcommitted — at no instant do the runs a node's own log shows exceed what
//                             it has, in CPU, memory or runs at once (start lines carry both;
//                             older logs without them are skipped);
//   2. never lost           — every job in the history ends in a terminal state;
//   3. never early          — nothing is placed (history) or started (run log) before the
//                             job's due_at in force for that attempt;
//      queues within limits — at no instant do the runs of a queue's jobs (run logs; the queue
//                             from the job's creation row), or of a namespace with a quota,
//                             exceed their limits (CheckInput.queueLimits);
//      cron occurrences     — each handled once, none early, none missed (./cron.ts).
import type { RunLogLine } from '../agent/run-log.js';
import { instant, type Instant } from './instant.js';
import type { Run, RunEnd } from './run.js';
import { findCronViolations, type CronCursor, type CronFindings, type CronOccurrenceRecord } from './cron-findings.js';

/** One row of the `history` table (README "The history"); times in ms since the Unix epoch. */
export interface HistoryRow {
  id: number;
  /** Database time of the change, ms since the Unix epoch (the fraction keeps the microseconds). */
  at: number;
  entity: 'job' | 'assignment';
  jobUid: string;
  /** namespace/name */
  job: string;
  assignment: string | null;
  node: string | null;
  epoch: number | null;
  fromState: string | null;
  toState: string;
  reason: string | null;
  replica: string | null;
  /** Job rows: when the job was due (ms since the Unix epoch); null on assignment rows. */
  dueAt: number | null;
  /** The row of a job's creation: the names of the jobs of its namespace it needs (none: null or absent). */
  needs?: string[] | null;
  /** The row of a job's creation: its queue, namespace/name (absent in older histories). */
  queue?: string | null;
}

/**
 * A queue's hard limits (null: none), or a namespace quota's (scope namespace), as the database
 * has them at the end of the run.
 */
export interface QueueLimit {
  /** namespace/name of a queue, or the namespace of a quota */
  queue: string;
  /** absent: a queue */
  scope?: 'queue' | 'namespace';
  concurrencyLimit: number | null;
  cpuMillis: number | null;
  memoryBytes: number | null;
}

export interface CheckInput {
  history: HistoryRow[];
  runs: RunLogLine[];
  queueLimits?: QueueLimit[];
  /** CronJobs' occurrence records (absent: nothing to check). */
  cronRecords?: CronOccurrenceRecord[];
  /** Each CronJob's cursor when read (absent: not checked). */
  cronCursors?: CronCursor[];
}

export const ACTIVE_ASSIGNMENT_STATES: readonly string[] = ['Assigned', 'Running'];
export const TERMINAL_JOB_STATES: readonly string[] = [
  'Succeeded',
  'Failed',
  'Cancelled',
  'Skipped',
  'Dead',
  'Deleted',
];

export { instant, type Instant } from './instant.js';

export interface ActiveAssignment {
  assignment: string;
  node: string | null;
  epoch: number | null;
  /** when its Assigned row was written */
  since: Instant;
}

export interface PlacedTwiceCase {
  job: string;
  jobUid: string;
  /** the history row that made the second (or further) assignment active */
  at: Instant;
  historyId: number;
  /** every assignment active at that moment, oldest first */
  active: ActiveAssignment[];
}

export interface OvercommitCase {
  node: string;
  /** when the node's runs first exceeded what it has (of this episode) */
  at: Instant;
  cpuMillis: number;
  memoryBytes: number;
  capacity: { cpuMillis: number; memoryBytes: number; maxJobs?: number };
  /** the runs at that instant */
  running: Array<{ job: string; assignment: string }>;
}

export interface OverlapCase {
  job: string;
  jobUid: string;
  runs: [Run, Run];
  /** how long both ran at once; null when neither has an end (both still running) */
  overlapMs: number | null;
}

export interface LostCase {
  job: string;
  jobUid: string;
  /** the state of its last job row, null when the history has no job row for it */
  lastState: string | null;
  lastAt: Instant | null;
  assignment: string | null;
  node: string | null;
}

export interface EarlyCase {
  kind: 'placed' | 'started';
  job: string;
  jobUid: string;
  assignment: string;
  node: string | null;
  /** pid of the agent, for a start */
  pid?: number;
  at: Instant;
  dueAt: Instant;
  earlyByMs: number;
}

export interface UnmetNeedCase {
  job: string;
  jobUid: string;
  assignment: string;
  at: Instant;
  /** namespace/name of the need */
  need: string;
  /** the need's state when the job was placed (null: the need was never accepted) */
  needState: string | null;
}

export interface OverQueueLimitCase {
  queue: string;
  /** when the queue's runs first exceeded a limit (of this episode) */
  at: Instant;
  running: number;
  cpuMillis: number;
  memoryBytes: number;
  limit: QueueLimit;
  /** the runs at that instant */
  runs: Array<{ job: string; assignment: string; node: string }>;
}

export interface CheckReport extends CronFindings {
  /** no case in any finding */
  ok: boolean;
  /** 1. jobs with two active assignments at once, by the history */
  placedTwice: PlacedTwiceCase[];
  /** 2. two runs of a job (run logs) at overlapping wall-clock times */
  overlappingRuns: OverlapCase[];
  /** a node running more than it has, by its own log */
  overcommitted: OvercommitCase[];
  /** 3. accepted jobs whose last job row is not terminal */
  lost: LostCase[];
  /** 4. placements or starts before the job was due */
  early: EarlyCase[];
  /** 5. placements of a job before every job it needs had succeeded */
  unmetNeeds: UnmetNeedCase[];
  /** instants at which a queue's runs exceeded its limits */
  overQueueLimit: OverQueueLimitCase[];
  /** jobs whose last job row is terminal, by that state */
  finished: Record<string, number>;
  counts: {
    historyRows: number;
    runLogLines: number;
    /** jobs in the history */
    jobs: number;
    /** assignments in the history */
    assignments: number;
    /** `start` lines */
    runs: number;
    /** `reject` lines */
    rejected: number;
    /** `stop` lines with reason self-fence */
    selfFencedStops: number;
    /** starts without a stop, bounded by the history (the assignment left the active states) */
    runsEndedByHistory: number;
    /** starts without a stop and without an end in the history: taken as still running */
    runsWithoutEnd: number;
    /** run-log lines of jobs the history does not know (never accepted?) */
    runLogLinesOfUnknownJobs: number;
    /** CronJob occurrence records, by outcome */
    cronFired: number;
    cronSkipped: number;
  };
}

/** A report's findings as counts, for a benchmark's report line. */
export interface Verdict {
  ok: boolean;
  placedTwice: number;
  overlappingRuns: number;
  overcommitted: number;
  lost: number;
  early: number;
  unmetNeeds: number;
  overQueueLimit: number;
  /** cron occurrences handled twice, fired early or missed */
  cron: number;
  runs: number;
}

export function verdictOf(report: CheckReport): Verdict {
  return {
    ok: report.ok,
    placedTwice: report.placedTwice.length,
    overlappingRuns: report.overlappingRuns.length,
    overcommitted: report.overcommitted.length,
    lost: report.lost.length,
    early: report.early.length,
    unmetNeeds: report.unmetNeeds.length,
    overQueueLimit: report.overQueueLimit.length,
    cron:
      report.cronHandledTwice.length +
      report.cronEarly.length +
      report.cronMissed.length +
      report.cronStuck.length +
      report.cronOverlap.length,
    runs: report.counts.runs,
  };
}

const byHistoryOrder = (a: HistoryRow, b: HistoryRow): number => a.at - b.at || a.id - b.id;

function groupBy<T>(items: Iterable<T>, key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export function check(input: CheckInput): CheckReport {
  const history = [...input.history].sort(byHistoryOrder);
  const byJob = groupBy(history, (r) => r.jobUid);

  const placedTwice = findPlacedTwice(byJob);
  const runs = buildRuns(input.runs, history);
  const overlappingRuns = findOverlaps(runs);
  const overcommitted = findOvercommits(runs);
  const lost = findLost(byJob);
  const early = findEarly(byJob, runs);
  const unmetNeeds = findUnmetNeeds(byJob);
  const overQueueLimit = findOverQueueLimit(runs, history, input.queueLimits ?? []);
  const cron = findCronViolations(input.cronRecords ?? [], runs, input.cronCursors ?? []);
  const cronCases =
    cron.cronHandledTwice.length +
    cron.cronEarly.length +
    cron.cronMissed.length +
    cron.cronStuck.length +
    cron.cronOverlap.length;

  const finished: Record<string, number> = {};
  for (const rows of byJob.values()) {
    const last = lastJobRow(rows);
    if (last && TERMINAL_JOB_STATES.includes(last.toState)) finished[last.toState] = (finished[last.toState] ?? 0) + 1;
  }
  const assignments = new Set(
    history.filter((r) => r.entity === 'assignment' && r.assignment !== null).map((r) => r.assignment),
  );

  return {
    ok:
      placedTwice.length +
        overlappingRuns.length +
        overcommitted.length +
        lost.length +
        early.length +
        unmetNeeds.length +
        overQueueLimit.length +
        cronCases ===
      0,
    placedTwice,
    overlappingRuns,
    overcommitted,
    lost,
    early,
    unmetNeeds,
    overQueueLimit,
    ...cron,
    finished,
    counts: {
      historyRows: input.history.length,
      runLogLines: input.runs.length,
      jobs: byJob.size,
      assignments: assignments.size,
      runs: runs.length,
      rejected: input.runs.filter((l) => l.event === 'reject').length,
      selfFencedStops: input.runs.filter((l) => l.event === 'stop' && l.reason === 'self-fence').length,
      runsEndedByHistory: runs.filter((r) => r.end.by === 'history').length,
      runsWithoutEnd: runs.filter((r) => r.end.by === 'none').length,
      runLogLinesOfUnknownJobs: input.runs.filter((l) => !byJob.has(l.jobUid)).length,
      cronFired: (input.cronRecords ?? []).filter((r) => r.outcome === 'Fired').length,
      cronSkipped: (input.cronRecords ?? []).filter((r) => r.outcome === 'Skipped').length,
    },
  };
}

// 1. Placed twice: replay each job's assignment rows; an assignment is active from a row into
// Assigned/Running until a row into any other state.
function findPlacedTwice(byJob: Map<string, HistoryRow[]>): PlacedTwiceCase[] {
  const cases: PlacedTwiceCase[] = [];
  for (const rows of byJob.values()) {
    const active = new Map<string, ActiveAssignment>();
    for (const row of rows) {
      if (row.entity !== 'assignment' || row.assignment === null) continue;
      if (!ACTIVE_ASSIGNMENT_STATES.includes(row.toState)) {
        active.delete(row.assignment);
        continue;
      }
      if (active.has(row.assignment)) continue; // Assigned -> Running: still the same one
      active.set(row.assignment, {
        assignment: row.assignment,
        node: row.node,
        epoch: row.epoch,
        since: instant(row.at),
      });
      if (active.size > 1) {
        cases.push({
          job: row.job,
          jobUid: row.jobUid,
          at: instant(row.at),
          historyId: row.id,
          active: [...active.values()],
        });
      }
    }
  }
  return cases;
}

// Runs: each `start` line is one run. Its end is the matching `stop` line of the same node, pid
// and assignment (FIFO, by the process's monotonic clock); without one (the agent was killed),
// the first history row that took the assignment out of the active states; without that, none.
function buildRuns(lines: RunLogLine[], history: HistoryRow[]): Run[] {
  const leftActive = new Map<string, HistoryRow>();
  for (const row of history) {
    if (row.entity !== 'assignment' || row.assignment === null) continue;
    if (ACTIVE_ASSIGNMENT_STATES.includes(row.toState) || leftActive.has(row.assignment)) continue;
    leftActive.set(row.assignment, row);
  }

  const runs: Run[] = [];
  const perProcess = groupBy(
    lines.filter((l) => l.event === 'start' || l.event === 'stop'),
    (l) => JSON.stringify([l.node, l.pid, l.assignment]),
  );
  for (const group of perProcess.values()) {
    group.sort((a, b) => compareMono(a, b) || a.wallMs - b.wallMs);
    const open: RunLogLine[] = [];
    const close = (start: RunLogLine, end: RunEnd) => runs.push(runOf(start, end));
    for (const line of group) {
      if (line.event === 'start') open.push(line);
      else {
        const start = open.shift();
        if (start) close(start, { by: 'stop', at: instant(line.wallMs), reason: line.reason });
        // a stop without a start: its start line is not in the logs read; nothing to bound
      }
    }
    for (const start of open) {
      const left = leftActive.get(start.assignment);
      // A start written after the assignment had already ended is a run nobody bounded.
      if (left && left.at >= start.wallMs)
        close(start, { by: 'history', at: instant(left.at), state: left.toState, historyId: left.id });
      else close(start, { by: 'none', at: null });
    }
  }
  return runs.sort((a, b) => a.start.ms - b.start.ms);
}

function compareMono(a: RunLogLine, b: RunLogLine): number {
  try {
    const d = BigInt(a.monoNs) - BigInt(b.monoNs);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  } catch {
    return 0;
  }
}

function runOf(start: RunLogLine, end: RunEnd): Run {
  return {
    job: start.job,
    jobUid: start.jobUid,
    assignment: start.assignment,
    node: start.node,
    pid: start.pid,
    epoch: start.epoch,
    attempt: start.attempt,
    start: instant(start.wallMs),
    end,
    ...(start.cpuMillis === undefined ? {} : { cpuMillis: start.cpuMillis, memoryBytes: start.memoryBytes }),
    ...(start.nodeCpuMillis === undefined
      ? {}
      : { nodeCpuMillis: start.nodeCpuMillis, nodeMemoryBytes: start.nodeMemoryBytes }),
    ...(start.nodeMaxJobs === undefined ? {} : { nodeMaxJobs: start.nodeMaxJobs }),
  };
}

const endMs = (run: Run): number => (run.end.at === null ? Infinity : run.end.at.ms);

// 2. Two runs of a job overlap when each starts before the other ends (touching is not overlapping).
function findOverlaps(runs: Run[]): OverlapCase[] {
  const cases: OverlapCase[] = [];
  for (const jobRuns of groupBy(runs, (r) => r.jobUid).values()) {
    for (let i = 0; i < jobRuns.length; i++) {
      for (let j = i + 1; j < jobRuns.length; j++) {
        const a = jobRuns[i]!;
        const b = jobRuns[j]!;
        const from = Math.max(a.start.ms, b.start.ms);
        const to = Math.min(endMs(a), endMs(b));
        if (from < to)
          cases.push({ job: a.job, jobUid: a.jobUid, runs: [a, b], overlapMs: to === Infinity ? null : to - from });
      }
    }
  }
  return cases;
}

/** What runs at an instant of a sweep: the runs, and the CPU and memory they hold. */
interface Running {
  runs: Set<Run>;
  cpu: number;
  memory: number;
}

/**
 * Sweeps runs in time order, ends before starts at the same instant (touching is not
 * overlapping), and calls `episode` at the start that begins each episode of `exceeds`.
 */
function sweep(
  runs: Run[],
  exceeds: (now: Running, latest: Run) => boolean,
  episode: (now: Running, ms: number) => void,
): void {
  const events = runs.flatMap((run) => [
    { ms: run.start.ms, delta: 1, run },
    { ms: endMs(run), delta: -1, run },
  ]);
  events.sort((a, b) => a.ms - b.ms || a.delta - b.delta);
  const now: Running = { runs: new Set(), cpu: 0, memory: 0 };
  let over = false;
  for (const e of events) {
    if (e.delta > 0) now.runs.add(e.run);
    else now.runs.delete(e.run);
    now.cpu += e.delta * (e.run.cpuMillis ?? 0);
    now.memory += e.delta * (e.run.memoryBytes ?? 0);
    const exceeding = exceeds(now, e.run);
    if (exceeding && !over && e.delta > 0) episode(now, e.ms);
    over = exceeding;
  }
}

// Overcommitted: each node's runs (all its processes) against what it has.
function findOvercommits(runs: Run[]): OvercommitCase[] {
  const cases: OvercommitCase[] = [];
  const sized = runs.filter(
    (r) =>
      r.cpuMillis !== undefined &&
      r.memoryBytes !== undefined &&
      r.nodeCpuMillis !== undefined &&
      r.nodeMemoryBytes !== undefined,
  );
  for (const [node, nodeRuns] of groupBy(sized, (r) => r.node)) {
    // What the node has, as its newest start line says (a node may come back with another size).
    let capacity: OvercommitCase['capacity'] = { cpuMillis: 0, memoryBytes: 0 };
    sweep(
      nodeRuns,
      (now, latest) => {
        capacity = {
          cpuMillis: latest.nodeCpuMillis!,
          memoryBytes: latest.nodeMemoryBytes!,
          ...(latest.nodeMaxJobs === undefined ? {} : { maxJobs: latest.nodeMaxJobs }),
        };
        return (
          now.cpu > capacity.cpuMillis ||
          now.memory > capacity.memoryBytes ||
          (capacity.maxJobs !== undefined && now.runs.size > capacity.maxJobs)
        );
      },
      (now, ms) =>
        cases.push({
          node,
          at: instant(ms),
          cpuMillis: now.cpu,
          memoryBytes: now.memory,
          capacity,
          running: [...now.runs].map((r) => ({ job: r.job, assignment: r.assignment })),
        }),
    );
  }
  return cases;
}

// Over a queue's limits (or a namespace quota's): the runs of its jobs against its limits.
function findOverQueueLimit(runs: Run[], history: HistoryRow[], limits: QueueLimit[]): OverQueueLimitCase[] {
  const limited = limits.filter((l) => l.concurrencyLimit !== null || l.cpuMillis !== null || l.memoryBytes !== null);
  if (limited.length === 0) return [];
  const queueOf = new Map<string, string>();
  for (const row of history) if (row.entity === 'job' && row.queue) queueOf.set(row.jobUid, row.queue);
  const scopeOf = (run: Run, scope: QueueLimit['scope']) =>
    scope === 'namespace' ? run.job.split('/')[0]! : (queueOf.get(run.jobUid) ?? '');
  const cases: OverQueueLimitCase[] = [];
  for (const limit of limited) {
    sweep(
      runs.filter((r) => scopeOf(r, limit.scope) === limit.queue),
      (now) =>
        (limit.concurrencyLimit !== null && now.runs.size > limit.concurrencyLimit) ||
        (limit.cpuMillis !== null && now.cpu > limit.cpuMillis) ||
        (limit.memoryBytes !== null && now.memory > limit.memoryBytes),
      (now, ms) =>
        cases.push({
          queue: limit.queue,
          at: instant(ms),
          running: now.runs.size,
          cpuMillis: now.cpu,
          memoryBytes: now.memory,
          limit,
          runs: [...now.runs].map((r) => ({ job: r.job, assignment: r.assignment, node: r.node })),
        }),
    );
  }
  return cases;
}

function lastJobRow(rows: HistoryRow[]): HistoryRow | undefined {
  for (let i = rows.length - 1; i >= 0; i--) if (rows[i]!.entity === 'job') return rows[i];
  return undefined;
}

// 3. Lost: accepted (some history row) but its last job row is not terminal.
function findLost(byJob: Map<string, HistoryRow[]>): LostCase[] {
  const cases: LostCase[] = [];
  for (const [jobUid, rows] of byJob) {
    const last = lastJobRow(rows);
    if (last && TERMINAL_JOB_STATES.includes(last.toState)) continue;
    cases.push({
      job: rows[0]!.job,
      jobUid,
      lastState: last?.toState ?? null,
      lastAt: last ? instant(last.at) : null,
      assignment: last?.assignment ?? null,
      node: last?.node ?? null,
    });
  }
  return cases;
}

// 4. Early: placed (an assignment's Assigned row) or started (a run's start line) before the
// due_at in force for that attempt: that of the latest job row at or before the placement.
function findEarly(byJob: Map<string, HistoryRow[]>, runs: Run[]): EarlyCase[] {
  const cases: EarlyCase[] = [];
  const dueAtPlacement = new Map<string, number>(); // assignment -> due_at in force when placed
  for (const rows of byJob.values()) {
    let dueAt: number | null = null;
    const placed = new Set<string>();
    for (const row of rows) {
      if (row.entity === 'job') {
        if (row.dueAt !== null) dueAt = row.dueAt;
        continue;
      }
      if (row.assignment === null || row.toState !== 'Assigned' || placed.has(row.assignment)) continue;
      placed.add(row.assignment);
      if (dueAt === null) continue;
      dueAtPlacement.set(row.assignment, dueAt);
      if (row.at < dueAt) {
        cases.push({
          kind: 'placed',
          job: row.job,
          jobUid: row.jobUid,
          assignment: row.assignment,
          node: row.node,
          at: instant(row.at),
          dueAt: instant(dueAt),
          earlyByMs: dueAt - row.at,
        });
      }
    }
  }
  for (const run of runs) {
    const dueAt = dueAtPlacement.get(run.assignment) ?? dueAtBefore(byJob.get(run.jobUid) ?? [], run.start.ms);
    if (dueAt === null || run.start.ms >= dueAt) continue;
    cases.push({
      kind: 'started',
      job: run.job,
      jobUid: run.jobUid,
      assignment: run.assignment,
      node: run.node,
      pid: run.pid,
      at: run.start,
      dueAt: instant(dueAt),
      earlyByMs: dueAt - run.start.ms,
    });
  }
  return cases;
}

/** For a start whose placement the history does not show: the due_at of the latest job row at or before it. */
function dueAtBefore(rows: HistoryRow[], ms: number): number | null {
  let dueAt: number | null = null;
  for (const row of rows) {
    if (row.at > ms) break;
    if (row.entity === 'job' && row.dueAt !== null) dueAt = row.dueAt;
  }
  return dueAt;
}

// 5. Unmet needs: a job placed (an assignment's Assigned row) while a job it needs was not, at
// that instant, Succeeded by its latest job row (a need retried since must succeed again).
function findUnmetNeeds(byJob: Map<string, HistoryRow[]>): UnmetNeedCase[] {
  const byName = new Map<string, HistoryRow[]>();
  for (const rows of byJob.values()) {
    const name = rows[0]?.job;
    // A name reused after a delete: the later job is the one a need means.
    if (name !== undefined) byName.set(name, rows);
  }
  const cases: UnmetNeedCase[] = [];
  for (const rows of byJob.values()) {
    const needs = rows.find((r) => r.entity === 'job' && r.needs)?.needs ?? [];
    if (needs.length === 0) continue;
    const namespace = rows[0]!.job.split('/')[0]!;
    for (const row of rows) {
      if (row.entity !== 'assignment' || row.toState !== 'Assigned' || row.assignment === null) continue;
      for (const need of needs) {
        const full = `${namespace}/${need}`;
        const state = stateAt(byName.get(full) ?? [], row.at);
        if (state !== 'Succeeded') {
          cases.push({
            job: row.job,
            jobUid: row.jobUid,
            assignment: row.assignment,
            at: instant(row.at),
            need: full,
            needState: state,
          });
        }
      }
    }
  }
  return cases;
}

/** The state of a job's latest job row at or before `ms`, or null. */
function stateAt(rows: HistoryRow[], ms: number): string | null {
  let state: string | null = null;
  for (const row of rows) {
    if (row.at > ms) break;
    if (row.entity === 'job') state = row.toState;
  }
  return state;
}
