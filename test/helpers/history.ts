// What a test reads back about what ran: job phases from the database, and the independent
// checker over the history and the nodes' own run logs (the unique index alone makes "placed
// twice" impossible to see in the history; the logs show what the nodes actually ran).
import { existsSync } from 'node:fs';
import type { Queryable } from '../../src/checker/read.js';
import { readCheckInput } from '../../src/checker/read.js';
import { check } from '../../src/checker/check.js';

export { jobPhases } from '../../src/store/history.js';

/** The checker's findings that must be empty at any moment of a test (lost/early are the test's own business). */
export async function runFindings(db: Queryable, logFiles: string[]) {
  const report = check(await readCheckInput(db, logFiles.filter((f) => existsSync(f))));
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

export const CLEAN = { placedTwice: [], overlappingRuns: [], overcommitted: [], early: [], unmetNeeds: [], overQueueLimit: [], cronHandledTwice: [], cronEarly: [], cronMissed: [], cronStuck: [], cronOverlap: [] };
