// Cron math for CronJobs, pure: a schedule, instants in, instants and decisions out; the caller
// passes the database's clock as `now`.
//
// croner parses a pattern and matches it against wall-clock times; this file turns wall times
// into instants in the schedule's zone, with one rule for daylight saving time whatever the
// pattern (croner's own zone mode treats lists, ranges and steps differently):
//   - a wall time that happens twice (the clock falls back) runs once, at the first;
//   - a wall time that does not happen (the clock springs forward) runs at the first instant
//     after the gap, and all such wall times, with the one at the gap's end, run there once.
// Schedules resolve to whole seconds at most, so all the arithmetic is in whole seconds.
//
// What one pass of the controller does with the occurrences that came due (decideFire):
//   - due: the occurrences from the stored cursor up to now, oldest first, at most
//     maxOccurrences (at least one); the rest wait for the next pass (`more`).
//   - suspended: every due occurrence is skipped (Suspended).
//   - older than startingDeadlineSeconds: skipped (MissedDeadline), whatever catchUp.
//   - missed (a later occurrence is due too): latest and none skip it (MissedSchedule), all
//     runs it. The last due one runs, except under none when it is more than ON_TIME_SECONDS
//     late (MissedSchedule).
//   - then concurrency, in order: Allow runs them all; Forbid runs one only if nothing is
//     active and none ran earlier in the pass (else StillRunning); Replace runs only the last
//     (earlier ones Replaced) and cancels the runs active before the pass.
//   - the cursor moves to the occurrence after the last one handled, so the next pass starts
//     exactly where this one stopped.
import { Cron } from 'croner';
import type { CatchUp, ConcurrencyPolicy } from '../domain/resources.js';

export type { CatchUp, ConcurrencyPolicy };
export type SkipReason = 'MissedDeadline' | 'MissedSchedule' | 'StillRunning' | 'Replaced' | 'Suspended';

export interface CronSchedule {
  readonly pattern: string;
  readonly timeZone: string;
  /** The pattern has a leading seconds field. */
  readonly seconds: boolean;
}

/** A schedule or time zone a CronJob cannot use; `field` says which. */
export class ScheduleError extends Error {
  override readonly name = 'ScheduleError';

  constructor(
    readonly field: 'schedule' | 'timeZone',
    message: string,
  ) {
    super(message);
  }
}

/** How late (seconds) the last due occurrence may be and still run under catchUp none. */
export const ON_TIME_SECONDS = 60;

const MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
const SECOND = 1000;
const HOUR = 3600 * SECOND;
// No zone is more than 14 hours from UTC, so the offsets 14 hours either side of a wall time
// are the ones in force before and after any transition near it.
const REACH = 14 * HOUR;

/** Validates and normalizes; throws ScheduleError saying what is wrong. `now` is the reference for the never-fires check. */
export function parseSchedule(schedule: string, timeZone: string, now: Date = new Date(0)): CronSchedule {
  const pattern = schedule.trim().split(/\s+/).join(' ');
  const fields = pattern === '' ? 0 : pattern.split(' ').length;
  if (pattern.startsWith('@')) {
    if (!MACROS.includes(pattern))
      throw new ScheduleError(
        'schedule',
        `"${pattern}" is not supported: use 5 fields, 6 with seconds, or one of ${MACROS.join(' ')}`,
      );
  } else if (fields !== 5 && fields !== 6) {
    throw new ScheduleError(
      'schedule',
      `"${pattern}" has ${fields} field${fields === 1 ? '' : 's'}: want 5 (minute hour day-of-month month day-of-week) or 6 with a leading seconds field`,
    );
  }
  const parsed: CronSchedule = { pattern, timeZone, seconds: fields === 6 };
  try {
    matcher(parsed);
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/^CronPattern: /, '');
    throw new ScheduleError('schedule', `"${pattern}" is not a valid schedule: ${reason}`);
  }
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
  } catch {
    throw new ScheduleError('timeZone', `"${timeZone}" is not a known IANA time zone (e.g. "Europe/Berlin", "UTC")`);
  }
  // Without a year field a pattern fires within every 400-year cycle or never, so any `now`
  // tells the two apart, the default as well as the caller's.
  if (nextOccurrence(parsed, now) === null) throw new ScheduleError('schedule', `"${pattern}" never fires`);
  return parsed;
}

/** The first occurrence strictly after `after`; null if there is none. */
export function nextOccurrence(s: CronSchedule, after: Date): Date | null {
  const at = nextAfter(matcher(s), s.timeZone, after.getTime());
  return at === null ? null : new Date(at);
}

/** Occurrences in (after, until], oldest first, at most max. */
export function occurrencesBetween(s: CronSchedule, after: Date, until: Date, max: number): Date[] {
  const match = matcher(s);
  const found: Date[] = [];
  let at: number | null = after.getTime();
  while (found.length < max) {
    at = nextAfter(match, s.timeZone, at);
    if (at === null || at > until.getTime()) break;
    found.push(new Date(at));
  }
  return found;
}

export interface FireInput {
  schedule: CronSchedule;
  /** The stored next_fire_at: itself an occurrence, not yet handled. */
  cursor: Date;
  /** The database's clock. */
  now: Date;
  suspend: boolean;
  catchUp: CatchUp;
  startingDeadlineSeconds: number | null;
  concurrencyPolicy: ConcurrencyPolicy;
  /** Runs of this CronJob not yet finished. */
  active: number;
  /** Most occurrences one pass handles (the rest next pass). */
  maxOccurrences: number;
}

export interface FireDecision {
  /** Oldest first. */
  fire: Date[];
  /** Oldest first. */
  skip: { at: Date; reason: SkipReason }[];
  /** Replace: cancel the runs active before this pass. */
  replaceActive: boolean;
  /** The next occurrence after the last one handled; null = never again. */
  nextCursor: Date | null;
  /** Due occurrences remain beyond maxOccurrences. */
  more: boolean;
}

/** The rules are in this file's header: they are what a CronJob promises its user. */
export function decideFire(input: FireInput): FireDecision {
  const { schedule, cursor, now } = input;
  if (cursor > now) return { fire: [], skip: [], replaceActive: false, nextCursor: cursor, more: false };
  const match = matcher(schedule);
  const nowMs = now.getTime();
  const limit = Math.max(1, Math.floor(input.maxOccurrences));
  const due = [cursor.getTime()];
  let next = nextAfter(match, schedule.timeZone, due[0]!);
  while (next !== null && next <= nowMs && due.length < limit) {
    due.push(next);
    next = nextAfter(match, schedule.timeZone, next);
  }
  const more = next !== null && next <= nowMs;

  const skipped: { at: number; reason: SkipReason }[] = [];
  const candidates: number[] = [];
  due.forEach((at, i) => {
    const missed = i < due.length - 1 || more;
    const lateMs = nowMs - at;
    let reason: SkipReason | null = null;
    if (input.suspend) reason = 'Suspended';
    else if (input.startingDeadlineSeconds !== null && lateMs > input.startingDeadlineSeconds * SECOND)
      reason = 'MissedDeadline';
    else if (input.catchUp !== 'all' && (missed || (input.catchUp === 'none' && lateMs > ON_TIME_SECONDS * SECOND)))
      reason = 'MissedSchedule';
    if (reason) skipped.push({ at, reason });
    else candidates.push(at);
  });

  const fire: number[] = [];
  candidates.forEach((at, i) => {
    if (input.concurrencyPolicy === 'Forbid' && (input.active > 0 || fire.length > 0))
      skipped.push({ at, reason: 'StillRunning' });
    else if (input.concurrencyPolicy === 'Replace' && i < candidates.length - 1)
      skipped.push({ at, reason: 'Replaced' });
    else fire.push(at);
  });
  skipped.sort((a, b) => a.at - b.at);
  return {
    fire: fire.map((at) => new Date(at)),
    skip: skipped.map(({ at, reason }) => ({ at: new Date(at), reason })),
    replaceActive: input.concurrencyPolicy === 'Replace' && input.active > 0 && fire.length > 0,
    nextCursor: next === null ? null : new Date(next),
    more,
  };
}

/**
 * The deterministic Job name of an occurrence, so creating it twice is a name conflict rather
 * than a second run: `<cronjob>-<minutes since the epoch>`, seconds if the schedule has them.
 */
export function occurrenceName(cronJobName: string, s: CronSchedule, at: Date): string {
  return `${cronJobName}-${Math.floor(at.getTime() / (s.seconds ? SECOND : 60 * SECOND))}`;
}

// croner sees wall times encoded as UTC instants. A fixed offset of zero rather than the zone
// "UTC": the same matches, without croner converting through Intl on every step.
function matcher(s: CronSchedule): Cron {
  return new Cron(s.pattern, { utcOffset: 0, paused: true, mode: '5-or-6-parts', domAndDow: false });
}

function nextAfter(match: Cron, timeZone: string, after: number): number | null {
  const afterSec = Math.floor(after / SECOND) * SECOND;
  let wall = wallClock(timeZone, afterSec);
  // One step, or two when `after` is in the second pass of a repeated hour; more means a zone
  // this file does not understand, and silence would stop the CronJob for good.
  for (let step = 0; step < 4; step++) {
    const next = match.nextRun(new Date(wall));
    if (!next) return null;
    const at = resolveWall(timeZone, next.getTime());
    if (at > after) return at;
    // That wall time had its turn in the first pass, as had every one up to the end of it.
    wall = Math.max(next.getTime(), wallClock(timeZone, firstOffsetChange(timeZone, at, afterSec) - SECOND));
  }
  throw new Error(`cron: no next occurrence found in ${timeZone} after ${new Date(after).toISOString()}`);
}

/** The instant a wall time stands for: the first if it happens twice, the gap's end if never. */
function resolveWall(timeZone: string, wall: number): number {
  const early = wall - offset(timeZone, wall - REACH);
  const late = wall - offset(timeZone, wall + REACH);
  const real = [early, late].filter((at) => wallClock(timeZone, at) === wall);
  if (real.length > 0) return Math.min(...real);
  return firstOffsetChange(timeZone, Math.min(early, late), Math.max(early, late));
}

/** The first instant in (from, to] whose offset differs from `from`'s; `to` if none does. */
function firstOffsetChange(timeZone: string, from: number, to: number): number {
  const before = offset(timeZone, from);
  while (to - from > SECOND) {
    const mid = from + Math.floor((to - from) / (2 * SECOND)) * SECOND;
    if (offset(timeZone, mid) === before) from = mid;
    else to = mid;
  }
  return to;
}

function offset(timeZone: string, at: number): number {
  return wallClock(timeZone, at) - at;
}

// Building a formatter costs far more than using one, and a process sees few zones.
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time at `at` (whole seconds) in the zone, encoded as a UTC instant. */
function wallClock(timeZone: string, at: number): number {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  const part: Record<string, number> = {};
  for (const { type, value } of format.formatToParts(at)) part[type] = Number(value);
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = part;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}
