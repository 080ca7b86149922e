// What a test reads back about what ran: job phases from the database, and the independent
// checker over the history and the nodes' own run logs (the unique index alone makes "placed
// twice" impossible to see in the history; the logs show what the nodes actually ran).
import { existsSync } from 'node:fs';
import type { Queryable } from '../../src/checker/read.js';
import { readCheckInput } from '../../src/checker/read.js';
import { check } from '../../src/checker/check.js';
import type { TestDatabase } from './database.js';

export { jobPhases } from '../../src/store/history.js';

/** The checker's findings that must be empty at any moment of a test (lost/early are the test's own business). */
export async function runFindings(db: Queryable, logFiles: string[]) {
  const report = check(
    await readCheckInput(
      db,
      logFiles.filter((f) => existsSync(f)),
    ),
  );
  return {
    placedTwice: report.placedTwice,
    overlappingRuns: report.overlappingRuns,
    overcommitted: report.overcommitted,
    early: report.early,
    unmetNeeds: report.unmetNeeds,
    overQueueLimit: report.overQueueLimit,
    cronHandledTwice: report.cronHandledTwice,
    cronEarly: report.cronEarly,
    cronMissed: report.cronMissed,
    cronStuck: report.cronStuck,
    cronOverlap: report.cronOverlap,
  };
}

export const CLEAN = {
  placedTwice: [],
  overlappingRuns: [],
  overcommitted: [],
  early: [],
  unmetNeeds: [],
  overQueueLimit: [],
  cronHandledTwice: [],
  cronEarly: [],
  cronMissed: [],
  cronStuck: [],
  cronOverlap: [],
};

/**
 * The placements into a namespace, each at its placing transaction's database time (the clock
 * its token bucket is counted by, not the history row's), oldest first, in seconds; and the
 * largest number of them in any span beyond what `burst + perSecond × span` allows (0: within).
 */
export async function placementsOverRate(
  db: TestDatabase['db'],
  namespace: string,
  burst: number,
  perSecond: number,
): Promise<{ placements: number; over: number }> {
  const at = (
    await db.query<{ at: number }>(
      'SELECT extract(epoch FROM created_at)::float8 AS at FROM assignments WHERE namespace = $1 ORDER BY created_at',
      [namespace],
    )
  ).rows.map((r) => r.at);
  let over = 0;
  for (let i = 0; i < at.length; i++) {
    for (let j = i; j < at.length; j++)
      over = Math.max(over, j - i + 1 - (burst + perSecond * (at[j]! - at[i]!) + 1e-6));
  }
  return { placements: at.length, over: Math.max(0, over) };
}
