// The checker's CronJob findings, pure, from the occurrence records (cron_occurrences, written by
// the statement that advances each CronJob's cursor, each with the schedule it belongs to):
//   - handled twice: two records of one scheduled time (two Jobs for one occurrence, or a run
//     and a skip), whatever made them;
//   - fired early: a record written before its scheduled time (by the database's clock);
//   - missed: between two consecutive records made under one version of the CronJob (so one
//     schedule), an occurrence of that schedule with no record at all (neither fired nor
//     skipped with a reason).
import { nextOccurrence, parseSchedule } from '../scheduling/cron.js';
import { instant, type Instant } from './instant.js';

export interface CronOccurrenceRecord {
  id: number;
  cronJobUid: string;
  /** namespace/name */
  cronJob: string;
  version: number;
  schedule: string;
  timeZone: string;
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

export interface CronFindings {
  cronHandledTwice: CronTwiceCase[];
  cronEarly: CronEarlyCase[];
  cronMissed: CronMissedCase[];
}

export function findCronViolations(records: CronOccurrenceRecord[]): CronFindings {
  const cronHandledTwice: CronTwiceCase[] = [];
  const cronEarly: CronEarlyCase[] = [];
  const cronMissed: CronMissedCase[] = [];
  const byOccurrence = new Map<string, CronOccurrenceRecord[]>();
  for (const r of records) {
    const key = `${r.cronJobUid} ${r.scheduledAt}`;
    byOccurrence.set(key, [...(byOccurrence.get(key) ?? []), r]);
    if (r.at < r.scheduledAt) cronEarly.push({ cronJob: r.cronJob, scheduledAt: instant(r.scheduledAt), job: r.job, at: instant(r.at) });
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
          cronMissed.push({ cronJob: rows[0]!.cronJob, scheduledAt: instant(expected.getTime()), after: instant(times[i - 1]!), before: instant(times[i]!) });
          break;
        }
        expected = nextOccurrence(schedule, expected);
      }
    }
  }
  return { cronHandledTwice, cronEarly, cronMissed };
}
