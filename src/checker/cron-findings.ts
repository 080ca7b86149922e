// The checker's CronJob findings, pure, from the occurrence records (cron_occurrences, written by
// the statement that advances each CronJob's cursor, each with the schedule it belongs to):
//   - handled twice: two records of one scheduled time (two Jobs for one occurrence, or a run
//     and a skip), whatever made them;
//   - fired early: a record written before its scheduled time (by the database's clock);
//   - missed: between two consecutive records made under one version of the CronJob (so one
//     schedule), an occurrence of that schedule with no record at all (neither fired nor
//     skipped with a reason);
//   - stuck: a CronJob whose next occurrence is more than STUCK_AFTER_MS behind the database's
//     clock when checked (due, and nothing handles it);
//   - overlapping runs under Forbid or Replace: two of the CronJob's Jobs running at one instant
//     by the nodes' logs (a replaced run must have stopped before its replacement starts).
import { nextOccurrence, parseSchedule } from '../cron/schedule.js';
import { instant, type Instant } from './instant.js';
import type { Run } from './run.js';

export interface CronOccurrenceRecord {
  id: number;
  cronJobUid: string;
  /** namespace/name */
  cronJob: string;
  version: number;
  schedule: string;
  timeZone: string;
  concurrencyPolicy: string;
  /** the Job of a fired occurrence */
  jobUid: string | null;
  /** ms since the Unix epoch */
  scheduledAt: number;
  outcome: 'Fired' | 'Skipped';
  reason: string | null;
  job: string | null;
  /** when the record was written, database time, ms since the Unix epoch */
  at: number;
}

export interface CronTwiceCase {
  cronJob: string;
  scheduledAt: Instant;
  records: Array<{ outcome: string; reason: string | null; job: string | null; at: Instant }>;
}

export interface CronEarlyCase {
  cronJob: string;
  scheduledAt: Instant;
  job: string | null;
  at: Instant;
}

export interface CronMissedCase {
  cronJob: string;
  /** the occurrence with no record */
  scheduledAt: Instant;
  /** the records either side of it */
  after: Instant;
  before: Instant;
}

/** A CronJob's cursor when the check ran. */
export interface CronCursor {
  cronJob: string;
  nextFireAt: number;
  checkedAt: number;
}

/** Long past every lateness a pass, a takeover or a restart makes (bench/results/cron-*). */
export const STUCK_AFTER_MS = 30_000;

export interface CronStuckCase {
  cronJob: string;
  nextFireAt: Instant;
  checkedAt: Instant;
}

export interface CronOverlapCase {
  cronJob: string;
  policy: string;
  /** the two runs, of two of its Jobs, that overlapped */
  runs: Array<{ job: string; assignment: string; node: string; start: Instant; end: Instant | null }>;
}

export interface CronFindings {
  cronHandledTwice: CronTwiceCase[];
  cronEarly: CronEarlyCase[];
  cronMissed: CronMissedCase[];
  cronStuck: CronStuckCase[];
  cronOverlap: CronOverlapCase[];
}

export function findCronViolations(
  records: CronOccurrenceRecord[],
  runs: readonly Run[] = [],
  cursors: readonly CronCursor[] = [],
): CronFindings {
  const cronHandledTwice: CronTwiceCase[] = [];
  const cronEarly: CronEarlyCase[] = [];
  const cronMissed: CronMissedCase[] = [];
  const byOccurrence = new Map<string, CronOccurrenceRecord[]>();
  for (const r of records) {
    const key = `${r.cronJobUid} ${r.scheduledAt}`;
    byOccurrence.set(key, [...(byOccurrence.get(key) ?? []), r]);
    if (r.at < r.scheduledAt)
      cronEarly.push({ cronJob: r.cronJob, scheduledAt: instant(r.scheduledAt), job: r.job, at: instant(r.at) });
  }
  for (const group of byOccurrence.values()) {
    if (group.length < 2) continue;
    cronHandledTwice.push({
      cronJob: group[0]!.cronJob,
      scheduledAt: instant(group[0]!.scheduledAt),
      records: group.map((r) => ({ outcome: r.outcome, reason: r.reason, job: r.job, at: instant(r.at) })),
    });
  }
  const byVersion = new Map<string, CronOccurrenceRecord[]>();
  for (const r of records) {
    const key = `${r.cronJobUid} ${r.version}`;
    byVersion.set(key, [...(byVersion.get(key) ?? []), r]);
  }
  // An occurrence missing from one version's records may be in another's: an edit hands the
  // occurrences both schedules share to the new version.
  const recorded = new Set(records.map((r) => `${r.cronJobUid} ${r.scheduledAt}`));
  for (const rows of byVersion.values()) {
    const schedule = parseSchedule(rows[0]!.schedule, rows[0]!.timeZone);
    const times = [...new Set(rows.map((r) => r.scheduledAt))].sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      let expected = nextOccurrence(schedule, new Date(times[i - 1]!));
      for (let step = 0; expected !== null && expected.getTime() < times[i]! && step < 10_000; step++) {
        if (!recorded.has(`${rows[0]!.cronJobUid} ${expected.getTime()}`)) {
          cronMissed.push({
            cronJob: rows[0]!.cronJob,
            scheduledAt: instant(expected.getTime()),
            after: instant(times[i - 1]!),
            before: instant(times[i]!),
          });
          break;
        }
        expected = nextOccurrence(schedule, expected);
      }
    }
  }
  const cronStuck = cursors
    .filter((c) => c.nextFireAt < c.checkedAt - STUCK_AFTER_MS)
    .map((c) => ({ cronJob: c.cronJob, nextFireAt: instant(c.nextFireAt), checkedAt: instant(c.checkedAt) }));
  return { cronHandledTwice, cronEarly, cronMissed, cronStuck, cronOverlap: findOverlaps(records, runs) };
}

function findOverlaps(records: CronOccurrenceRecord[], runs: readonly Run[]): CronOverlapCase[] {
  const cases: CronOverlapCase[] = [];
  const single = records.filter(
    (r) => r.jobUid !== null && (r.concurrencyPolicy === 'Forbid' || r.concurrencyPolicy === 'Replace'),
  );
  const cronJobOf = new Map(single.map((r) => [r.jobUid!, r]));
  const byCronJob = new Map<string, Run[]>();
  for (const run of runs) {
    const record = cronJobOf.get(run.jobUid);
    if (record) byCronJob.set(record.cronJobUid, [...(byCronJob.get(record.cronJobUid) ?? []), run]);
  }
  for (const [uid, mine] of byCronJob) {
    mine.sort((a, b) => a.start.ms - b.start.ms);
    let longest: Run | undefined; // the run started so far that ends last
    for (const run of mine) {
      const endOf = (r: Run) => r.end.at?.ms ?? Infinity;
      if (longest && endOf(longest) > run.start.ms && longest.jobUid !== run.jobUid) {
        const record = single.find((r) => r.cronJobUid === uid)!;
        const show = (r: Run) => ({
          job: r.job,
          assignment: r.assignment,
          node: r.node,
          start: r.start,
          end: r.end.at,
        });
        cases.push({ cronJob: record.cronJob, policy: record.concurrencyPolicy, runs: [show(longest), show(run)] });
      }
      if (!longest || endOf(run) > endOf(longest)) longest = run;
    }
  }
  return cases;
}
