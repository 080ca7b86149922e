// Cron math for CronJobs, pure: fixed instants in, instants and decisions out. DST cases are on
// real transition dates, so a change in the zone data shows up here first.
import { Cron } from 'croner';
import { describe, expect, it } from 'vitest';
import {
  decideFire,
  nextOccurrence,
  occurrenceName,
  occurrencesBetween,
  parseSchedule,
  ScheduleError,
  type FireDecision,
  type FireInput,
} from '../../src/cron/schedule.js';

const at = (iso: string) => new Date(iso);
const iso = (d: Date) => d.toISOString().replace('.000Z', 'Z');

/** The next n occurrences after `after`, each found from the one before. */
function nexts(pattern: string, timeZone: string, after: string, n: number): string[] {
  const s = parseSchedule(pattern, timeZone);
  const found: string[] = [];
  let cursor: Date | null = at(after);
  while (found.length < n && (cursor = nextOccurrence(s, cursor))) found.push(iso(cursor));
  return found;
}

describe('parseSchedule', () => {
  it.each([
    ['*/10 * * * *', '*/10 * * * *', false],
    ['  0  9 * *\tMON-FRI ', '0 9 * * MON-FRI', false],
    ['30 */5 * * * *', '30 */5 * * * *', true],
    ['0 0 1 JAN,JUL *', '0 0 1 JAN,JUL *', false],
    ['0 8-18/2 * * 1-5', '0 8-18/2 * * 1-5', false],
    ['@yearly', '@yearly', false],
    ['@annually', '@annually', false],
    ['@monthly', '@monthly', false],
    ['@weekly', '@weekly', false],
    ['@daily', '@daily', false],
    ['@midnight', '@midnight', false],
    ['@hourly', '@hourly', false],
  ])('%j → %j (seconds field: %s)', (input, pattern, seconds) => {
    expect(parseSchedule(input, 'Europe/Berlin')).toEqual({ pattern, timeZone: 'Europe/Berlin', seconds });
  });

  it.each(['UTC', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata'])('accepts the zone %s', (zone) => {
    expect(parseSchedule('0 * * * *', zone).timeZone).toBe(zone);
  });

  it.each([
    ['@reboot', 'UTC', 'schedule', '"@reboot" is not supported: use 5 fields, 6 with seconds, or one of @yearly'],
    ['@every 5m', 'UTC', 'schedule', '"@every 5m" is not supported'],
    ['* * * * * * *', 'UTC', 'schedule', '"* * * * * * *" has 7 fields: want 5'],
    ['* * *', 'UTC', 'schedule', '"* * *" has 3 fields'],
    ['   ', 'UTC', 'schedule', '"" has 0 fields'],
    ['61 * * * *', 'UTC', 'schedule', '"61 * * * *" is not a valid schedule: Invalid value for minute: 61'],
    ['0 0 * * 8', 'UTC', 'schedule', '"0 0 * * 8" is not a valid schedule: Invalid value for dayOfWeek: 8'],
    [
      '0 0 * FOO *',
      'UTC',
      'schedule',
      '"0 0 * FOO *" is not a valid schedule: configuration entry 4 (FOO) contains illegal characters',
    ],
    ['*/0 * * * *', 'UTC', 'schedule', '"*/0 * * * *" is not a valid schedule: Syntax error, illegal stepping: 0'],
    ['0 0 30 2 *', 'UTC', 'schedule', '"0 0 30 2 *" never fires'],
    ['0 0 31 4 *', 'America/New_York', 'schedule', '"0 0 31 4 *" never fires'],
    ['0 * * * *', 'Mars/Olympus', 'timeZone', '"Mars/Olympus" is not a known IANA time zone'],
    ['0 * * * *', '', 'timeZone', '"" is not a known IANA time zone'],
    ['0 * * * *', '+05:00', 'timeZone', '"+05:00" is not a known IANA time zone'],
  ])('refuses %j in %j: %s', (schedule, zone, field, message) => {
    let error: unknown;
    try {
      parseSchedule(schedule, zone, at('2026-05-01T00:00:00Z'));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ScheduleError);
    expect((error as ScheduleError).field).toBe(field);
    expect((error as ScheduleError).message).toContain(message);
  });

  it('runs when either day-of-month or day-of-week matches (Vixie cron, Kubernetes)', () => {
    // 2026-01-02 and -09 are Fridays, the 13th a Tuesday.
    expect(nexts('0 0 13 * FRI', 'UTC', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-02T00:00:00Z',
      '2026-01-09T00:00:00Z',
      '2026-01-13T00:00:00Z',
      '2026-01-16T00:00:00Z',
    ]);
  });
});

describe('nextOccurrence on ordinary days', () => {
  const patterns = ['*/10 * * * *', '0 9 * * MON-FRI', '30 2 * * *', '15 */3 * * *', '0 12 13 * FRI', '45 30 1 * * *'];
  const zones = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe'];
  const starts = ['2026-01-15T10:07:00Z', '2026-07-15T22:59:59Z'];
  const cases = patterns.flatMap((p) => zones.flatMap((z) => starts.map((s) => [p, z, s] as const)));

  it.each(cases)('%j in %s after %s agrees with croner', (pattern, zone, start) => {
    const croner = new Cron(pattern, { timezone: zone, paused: true }).nextRuns(5, at(start)).map(iso);
    expect(nexts(pattern, zone, start, 5)).toEqual(croner);
  });
});

describe('nextOccurrence across DST transitions', () => {
  it.each([
    // America/New_York springs forward 2026-03-08 02:00 EST → 03:00 EDT (07:00Z).
    [
      'a wall time in the gap runs at its end',
      '30 2 * * *',
      'America/New_York',
      '2026-03-07T12:00:00Z',
      ['2026-03-08T07:00:00Z', '2026-03-09T06:30:00Z'],
    ],
    [
      'two wall times in the gap run once',
      '0,30 2 * * *',
      'America/New_York',
      '2026-03-07T12:00:00Z',
      ['2026-03-08T07:00:00Z', '2026-03-09T06:00:00Z', '2026-03-09T06:30:00Z'],
    ],
    [
      'the gap and its end run once',
      '0,30 2-3 * * *',
      'America/New_York',
      '2026-03-08T06:00:00Z',
      ['2026-03-08T07:00:00Z', '2026-03-08T07:30:00Z', '2026-03-09T06:00:00Z'],
    ],
    [
      'an interval runs on across the gap',
      '*/30 * * * *',
      'America/New_York',
      '2026-03-08T06:00:00Z',
      ['2026-03-08T06:30:00Z', '2026-03-08T07:00:00Z', '2026-03-08T07:30:00Z'],
    ],
    [
      'seconds run on across the gap',
      '*/20 * * * * *',
      'America/New_York',
      '2026-03-08T06:59:20Z',
      ['2026-03-08T06:59:40Z', '2026-03-08T07:00:00Z', '2026-03-08T07:00:20Z'],
    ],
    [
      'a seconds wall time in the gap runs at its end',
      '15 30 2 * * *',
      'America/New_York',
      '2026-03-07T12:00:00Z',
      ['2026-03-08T07:00:00Z', '2026-03-09T06:30:15Z'],
    ],
    // America/New_York falls back 2026-11-01 02:00 EDT → 01:00 EST (06:00Z): 01:xx happens twice.
    [
      'a repeated wall time runs at the first pass',
      '30 1 * * *',
      'America/New_York',
      '2026-10-31T12:00:00Z',
      ['2026-11-01T05:30:00Z', '2026-11-02T06:30:00Z'],
    ],
    [
      'an hourly schedule skips the second pass',
      '0 * * * *',
      'America/New_York',
      '2026-11-01T03:30:00Z',
      ['2026-11-01T04:00:00Z', '2026-11-01T05:00:00Z', '2026-11-01T07:00:00Z', '2026-11-01T08:00:00Z'],
    ],
    [
      'an interval skips the second pass',
      '*/30 * * * *',
      'America/New_York',
      '2026-11-01T04:45:00Z',
      ['2026-11-01T05:00:00Z', '2026-11-01T05:30:00Z', '2026-11-01T07:00:00Z'],
    ],
    [
      'a cursor in the second pass goes to its end',
      '*/15 * * * *',
      'America/New_York',
      '2026-11-01T06:10:00Z',
      ['2026-11-01T07:00:00Z', '2026-11-01T07:15:00Z'],
    ],
    [
      'a seconds cursor at the start of the second pass',
      '* * * * * *',
      'America/New_York',
      '2026-11-01T06:00:00Z',
      ['2026-11-01T07:00:00Z', '2026-11-01T07:00:01Z'],
    ],
    [
      'a seconds cursor at the end of the first pass',
      '* * * * * *',
      'America/New_York',
      '2026-11-01T05:59:58Z',
      ['2026-11-01T05:59:59Z', '2026-11-01T07:00:00Z'],
    ],
    // Europe/Berlin: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
    [
      'Berlin, spring',
      '30 2 * * *',
      'Europe/Berlin',
      '2026-03-28T12:00:00Z',
      ['2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z'],
    ],
    [
      'Berlin, autumn',
      '30 2 * * *',
      'Europe/Berlin',
      '2026-10-24T12:00:00Z',
      ['2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z'],
    ],
    // Australia/Lord_Howe moves 30 minutes: 2026-10-04 02:00 → 02:30 (+10:30 → +11), 2026-04-05 02:00 → 01:30.
    [
      'Lord Howe, 30-minute gap',
      '15 2 * * *',
      'Australia/Lord_Howe',
      '2026-10-03T00:00:00Z',
      ['2026-10-03T15:30:00Z', '2026-10-04T15:15:00Z'],
    ],
    [
      'Lord Howe, 30-minute repeat',
      '45 1 * * *',
      'Australia/Lord_Howe',
      '2026-04-04T00:00:00Z',
      ['2026-04-04T14:45:00Z', '2026-04-05T15:15:00Z'],
    ],
    [
      'Lord Howe, a cursor in the second pass',
      '*/15 * * * *',
      'Australia/Lord_Howe',
      '2026-04-04T15:10:00Z',
      ['2026-04-04T15:30:00Z', '2026-04-04T15:45:00Z'],
    ],
  ])('%s: %j in %s after %s', (_name, pattern, zone, after, expected) => {
    expect(nexts(pattern, zone, after, expected.length)).toEqual(expected);
    const s = parseSchedule(pattern, zone);
    expect(occurrencesBetween(s, at(after), at(expected.at(-1)!), 100).map(iso)).toEqual(expected);
  });

  it('is strictly after a sub-second instant', () => {
    const s = parseSchedule('* * * * * *', 'UTC');
    expect(iso(nextOccurrence(s, at('2026-05-01T00:00:00.500Z'))!)).toBe('2026-05-01T00:00:01Z');
    expect(iso(nextOccurrence(s, at('2026-05-01T00:00:00Z'))!)).toBe('2026-05-01T00:00:01Z');
  });

  it('occurrencesBetween stops at max and at until (inclusive)', () => {
    const s = parseSchedule('*/10 * * * *', 'UTC');
    expect(occurrencesBetween(s, at('2026-05-01T10:00:00Z'), at('2026-05-01T10:30:00Z'), 10).map(iso)).toEqual([
      '2026-05-01T10:10:00Z',
      '2026-05-01T10:20:00Z',
      '2026-05-01T10:30:00Z',
    ]);
    expect(occurrencesBetween(s, at('2026-05-01T10:00:00Z'), at('2026-05-01T12:00:00Z'), 2).map(iso)).toEqual([
      '2026-05-01T10:10:00Z',
      '2026-05-01T10:20:00Z',
    ]);
  });
});

describe('decideFire', () => {
  // A 2-hour outage: the cursor is 10:10, the first occurrence it missed; 12 are due by 12:05,
  // the last (12:00) five minutes late.
  const outage: FireInput = {
    schedule: parseSchedule('*/10 * * * *', 'UTC'),
    cursor: at('2026-05-01T10:10:00Z'),
    now: at('2026-05-01T12:05:00Z'),
    suspend: false,
    catchUp: 'latest',
    startingDeadlineSeconds: null,
    concurrencyPolicy: 'Allow',
    active: 0,
    maxOccurrences: 100,
  };
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  const all = [
    '10:10',
    '10:20',
    '10:30',
    '10:40',
    '10:50',
    '11:00',
    '11:10',
    '11:20',
    '11:30',
    '11:40',
    '11:50',
    '12:00',
  ];

  /** What fired, and how many of each skip reason. */
  function summary(d: FireDecision) {
    const skips: Record<string, number> = {};
    for (const s of d.skip) skips[s.reason] = (skips[s.reason] ?? 0) + 1;
    return { fire: d.fire.map(hhmm), skips, replaceActive: d.replaceActive };
  }

  it.each<[string, Partial<FireInput>, ReturnType<typeof summary>]>([
    ['latest runs the last', {}, { fire: ['12:00'], skips: { MissedSchedule: 11 }, replaceActive: false }],
    ['all runs every one', { catchUp: 'all' }, { fire: all, skips: {}, replaceActive: false }],
    [
      'none skips a last one 5 minutes late',
      { catchUp: 'none' },
      { fire: [], skips: { MissedSchedule: 12 }, replaceActive: false },
    ],
    [
      'none runs a last one 30 s late',
      { catchUp: 'none', now: at('2026-05-01T12:00:30Z') },
      { fire: ['12:00'], skips: { MissedSchedule: 11 }, replaceActive: false },
    ],
    [
      'none runs a last one exactly ON_TIME_SECONDS late',
      { catchUp: 'none', now: at('2026-05-01T12:01:00Z') },
      { fire: ['12:00'], skips: { MissedSchedule: 11 }, replaceActive: false },
    ],
    [
      'latest within the deadline',
      { startingDeadlineSeconds: 600 },
      { fire: ['12:00'], skips: { MissedDeadline: 11 }, replaceActive: false },
    ],
    [
      'latest past the deadline',
      { startingDeadlineSeconds: 200 },
      { fire: [], skips: { MissedDeadline: 12 }, replaceActive: false },
    ],
    [
      'all within a 30-minute deadline',
      { catchUp: 'all', startingDeadlineSeconds: 1800 },
      { fire: ['11:40', '11:50', '12:00'], skips: { MissedDeadline: 9 }, replaceActive: false },
    ],
    [
      'none with a deadline it meets',
      { catchUp: 'none', now: at('2026-05-01T12:00:30Z'), startingDeadlineSeconds: 30 },
      { fire: ['12:00'], skips: { MissedDeadline: 11 }, replaceActive: false },
    ],
    [
      'none with a deadline it misses',
      { catchUp: 'none', now: at('2026-05-01T12:00:30Z'), startingDeadlineSeconds: 20 },
      { fire: [], skips: { MissedDeadline: 12 }, replaceActive: false },
    ],
    [
      'Forbid with all runs the oldest only',
      { catchUp: 'all', concurrencyPolicy: 'Forbid' },
      { fire: ['10:10'], skips: { StillRunning: 11 }, replaceActive: false },
    ],
    [
      'Forbid while one is active',
      { concurrencyPolicy: 'Forbid', active: 1 },
      { fire: [], skips: { MissedSchedule: 11, StillRunning: 1 }, replaceActive: false },
    ],
    [
      'Forbid, all and a deadline',
      { catchUp: 'all', concurrencyPolicy: 'Forbid', startingDeadlineSeconds: 1800 },
      { fire: ['11:40'], skips: { MissedDeadline: 9, StillRunning: 2 }, replaceActive: false },
    ],
    [
      'Replace with all runs the last, replacing the active',
      { catchUp: 'all', concurrencyPolicy: 'Replace', active: 2 },
      { fire: ['12:00'], skips: { Replaced: 11 }, replaceActive: true },
    ],
    [
      'Replace with nothing active',
      { concurrencyPolicy: 'Replace' },
      { fire: ['12:00'], skips: { MissedSchedule: 11 }, replaceActive: false },
    ],
    [
      'Replace when nothing runs keeps the active',
      { catchUp: 'none', concurrencyPolicy: 'Replace', active: 1 },
      { fire: [], skips: { MissedSchedule: 12 }, replaceActive: false },
    ],
    ['suspended', { suspend: true, catchUp: 'all' }, { fire: [], skips: { Suspended: 12 }, replaceActive: false }],
  ])('%s', (_name, change, expected) => {
    const d = decideFire({ ...outage, ...change });
    expect(summary(d)).toEqual(expected);
    // Every due occurrence is handled once, and the skips are oldest first.
    expect([...d.fire, ...d.skip.map((s) => s.at)].map(hhmm).sort()).toEqual(all);
    expect(d.skip.map((s) => s.at.getTime())).toEqual(d.skip.map((s) => s.at.getTime()).sort((a, b) => a - b));
    expect(iso(d.nextCursor!)).toBe('2026-05-01T12:10:00Z');
    expect(d.more).toBe(false);
  });

  it('does nothing while the cursor is in the future', () => {
    const cursor = at('2026-05-01T12:10:00Z');
    expect(decideFire({ ...outage, cursor })).toEqual({
      fire: [],
      skip: [],
      replaceActive: false,
      nextCursor: cursor,
      more: false,
    });
  });

  it('runs an occurrence due exactly now', () => {
    const d = decideFire({
      ...outage,
      catchUp: 'none',
      cursor: at('2026-05-01T12:00:00Z'),
      now: at('2026-05-01T12:00:00Z'),
    });
    expect(summary(d).fire).toEqual(['12:00']);
    expect(iso(d.nextCursor!)).toBe('2026-05-01T12:10:00Z');
  });

  it('moves the cursor across a DST gap', () => {
    const schedule = parseSchedule('30 2 * * *', 'America/New_York');
    const d = decideFire({ ...outage, schedule, cursor: at('2026-03-08T07:00:00Z'), now: at('2026-03-08T07:00:10Z') });
    expect(d.fire.map(iso)).toEqual(['2026-03-08T07:00:00Z']);
    expect(iso(d.nextCursor!)).toBe('2026-03-09T06:30:00Z');
  });

  it('pages through a backlog, stopping exactly where it left off', () => {
    const page = decideFire({ ...outage, catchUp: 'all', maxOccurrences: 5 });
    expect(page.fire.map(hhmm)).toEqual(['10:10', '10:20', '10:30', '10:40', '10:50']);
    expect(page.more).toBe(true);
    expect(iso(page.nextCursor!)).toBe('2026-05-01T11:00:00Z');
  });

  it.each<[Partial<FireInput>]>([
    [{ catchUp: 'latest' }],
    [{ catchUp: 'all' }],
    [{ catchUp: 'none', now: at('2026-05-01T12:00:30Z') }],
    [{ catchUp: 'latest', startingDeadlineSeconds: 1800 }],
    [{ catchUp: 'all', concurrencyPolicy: 'Forbid' }],
    [{ catchUp: 'latest', concurrencyPolicy: 'Replace', active: 1 }],
    [{ catchUp: 'all', suspend: true }],
  ])('pages of 5 decide what one pass does: %j', (change) => {
    const whole = decideFire({ ...outage, ...change });
    const fire: Date[] = [];
    const skip: FireDecision['skip'] = [];
    let input: FireInput = { ...outage, ...change, maxOccurrences: 5 };
    let replaceActive = false;
    for (let pages = 1; ; pages++) {
      const d = decideFire(input);
      fire.push(...d.fire);
      skip.push(...d.skip);
      replaceActive ||= d.replaceActive;
      if (!d.more) {
        expect(pages).toBe(3);
        expect(d.nextCursor).toEqual(whole.nextCursor);
        break;
      }
      input = { ...input, cursor: d.nextCursor!, active: input.active + d.fire.length };
    }
    expect({ fire, skip, replaceActive }).toEqual({
      fire: whole.fire,
      skip: whole.skip,
      replaceActive: whole.replaceActive,
    });
  });
});

describe('occurrenceName', () => {
  const minutes = parseSchedule('0 3 * * *', 'UTC');
  const seconds = parseSchedule('30 0 3 * * *', 'UTC');

  it.each([
    ['minutes since the epoch', minutes, '2026-05-01T03:00:00Z', 'nightly-29626740'],
    ['a minute schedule ignores seconds', minutes, '2026-05-01T03:00:59.999Z', 'nightly-29626740'],
    ['seconds since the epoch with a seconds field', seconds, '2026-05-01T03:00:00Z', 'nightly-1777604400'],
    ['the next second', seconds, '2026-05-01T03:00:01Z', 'nightly-1777604401'],
  ])('%s', (_name, schedule, when, name) => {
    expect(occurrenceName('nightly', schedule, at(when))).toBe(name);
  });

  it('names the same instant the same, whatever Date holds it', () => {
    const a = occurrenceName('nightly', minutes, at('2026-05-01T03:00:00Z'));
    const b = occurrenceName('nightly', minutes, new Date(Date.UTC(2026, 4, 1, 3)));
    expect(a).toBe(b);
    expect(occurrenceName('nightly', minutes, at('2026-05-02T03:00:00Z'))).not.toBe(a);
  });
});
