// Reading the append-only history back: what a checker needs to prove promises 1 and 2.
import type { Db } from './db.js';
import { sql } from './sql.js';

interface AssignmentEvent {
  job: string;
  job_uid: string;
  assignment: string;
  to_state: string;
}

const ACTIVE = new Set(['Assigned', 'Running']);

/** Jobs that ever had two active assignments at the same time, by the history's order. */
export async function jobsPlacedTwice(db: Db): Promise<string[]> {
  const rows = (await db.query<AssignmentEvent>(sql('history/assignment_transitions'))).rows;
  const active = new Map<string, Set<string>>();
  const twice = new Set<string>();
  for (const row of rows) {
    let set = active.get(row.job_uid);
    if (!set) active.set(row.job_uid, (set = new Set()));
    if (ACTIVE.has(row.to_state)) {
      set.add(row.assignment);
      if (set.size > 1) twice.add(row.job);
    } else {
      set.delete(row.assignment);
    }
  }
  return [...twice];
}

export async function jobPhases(db: Db): Promise<Record<string, number>> {
  const rows = (await db.query<{ phase: string; n: number }>(sql('jobs/phase_counts'))).rows;
  return Object.fromEntries(rows.map((r) => [r.phase, r.n]));
}
