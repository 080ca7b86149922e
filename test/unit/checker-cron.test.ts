// The checker's CronJob findings, pure, on hand-made occurrence records and runs: each occurrence
// handled once, none early, none missed between two records of one version (one recorded under
// another version counts), and no two runs at once under Forbid or Replace.
import { describe, expect, it } from 'vitest';
import { findCronViolations, type CronOccurrenceRecord } from '../../src/checker/cron-findings.js';
import { instant } from '../../src/checker/instant.js';
import type { Run } from '../../src/checker/run.js';

const T = Date.parse('2026-11-01T05:00:00Z');
let id = 0;

function record(at: number, extra: Partial<CronOccurrenceRecord> = {}): CronOccurrenceRecord {
  return {
    id: ++id,
    cronJobUid: 'c1',
    cronJob: 'default/tick',
    version: 1,
    schedule: '* * * * * *',
    timeZone: 'UTC',
    concurrencyPolicy: 'Allow',
    scheduledAt: at,
    outcome: 'Fired',
    reason: null,
    job: `tick-${at / 1000}`,
    jobUid: `j${at}`,
    at: at + 50,
    ...extra,
  };
}

function run(jobUid: string, start: number, end: number | null): Run {
  return {
    job: jobUid,
    jobUid,
    assignment: `a-${jobUid}`,
    node: 'n1',
    pid: 1,
    epoch: 1,
    attempt: 1,
    start: instant(start),
    end: end === null ? { by: 'none', at: null } : { by: 'stop', at: instant(end), reason: 'completed' },
  };
}

describe('cron findings', () => {
  it('none for a clean run of records', () => {
    expect(
      findCronViolations([
        record(T),
        record(T + 1000),
        record(T + 2000, { outcome: 'Skipped', reason: 'StillRunning', jobUid: null }),
      ]),
    ).toEqual({
      cronHandledTwice: [],
      cronEarly: [],
      cronMissed: [],
      cronStuck: [],
      cronOverlap: [],
    });
  });

  it('an occurrence recorded twice, one recorded before its time, one with no record', () => {
    const found = findCronViolations([
      record(T),
      record(T, { outcome: 'Skipped', reason: 'NameTaken' }),
      record(T + 1000, { at: T + 900 }),
      record(T + 3000),
    ]);
    expect(found.cronHandledTwice).toMatchObject([
      { scheduledAt: { ms: T }, records: [{ outcome: 'Fired' }, { outcome: 'Skipped', reason: 'NameTaken' }] },
    ]);
    expect(found.cronEarly).toMatchObject([{ scheduledAt: { ms: T + 1000 }, at: { ms: T + 900 } }]);
    expect(found.cronMissed).toMatchObject([
      { scheduledAt: { ms: T + 2000 }, after: { ms: T + 1000 }, before: { ms: T + 3000 } },
    ]);
  });

  it('an occurrence recorded under the next version (an edit handed it on) is not missed', () => {
    expect(findCronViolations([record(T), record(T + 1000, { version: 2 }), record(T + 2000)]).cronMissed).toEqual([]);
  });

  it.each(['Forbid', 'Replace'])(
    '%s: two of its runs at one instant, by the nodes’ logs; back to back is fine',
    (policy) => {
      const records = [record(T, { concurrencyPolicy: policy }), record(T + 1000, { concurrencyPolicy: policy })];
      const overlapping = findCronViolations(records, [
        run(`j${T}`, T + 100, T + 1500),
        run(`j${T + 1000}`, T + 1100, T + 1400),
      ]);
      expect(overlapping.cronOverlap).toMatchObject([
        { cronJob: 'default/tick', policy, runs: [{ job: `j${T}` }, { job: `j${T + 1000}` }] },
      ]);
      const unended = findCronViolations(records, [
        run(`j${T}`, T + 100, null),
        run(`j${T + 1000}`, T + 1100, T + 1400),
      ]);
      expect(unended.cronOverlap).toHaveLength(1);
      expect(
        findCronViolations(records, [run(`j${T}`, T + 100, T + 1100), run(`j${T + 1000}`, T + 1100, T + 1400)])
          .cronOverlap,
      ).toEqual([]);
    },
  );

  it('Allow: overlapping runs are what it allows', () => {
    expect(
      findCronViolations(
        [record(T), record(T + 1000)],
        [run(`j${T}`, T + 100, T + 1500), run(`j${T + 1000}`, T + 1100, T + 1400)],
      ).cronOverlap,
    ).toEqual([]);
  });

  it('a cursor far behind the clock is stuck; one a pass or a takeover late is not', () => {
    const checkedAt = T + 60_000;
    const found = findCronViolations(
      [],
      [],
      [
        { cronJob: 'default/stuck', nextFireAt: T, checkedAt },
        { cronJob: 'default/late', nextFireAt: checkedAt - 2_000, checkedAt },
      ],
    );
    expect(found.cronStuck).toMatchObject([{ cronJob: 'default/stuck', nextFireAt: { ms: T } }]);
  });
});
