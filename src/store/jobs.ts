// Jobs as users see them: submit, read, cancel, delete (any replica, no lease needed).
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Db, Tx } from './db.js';
import { transaction } from './db.js';
import { sql } from './sql.js';
import type { JobRow } from './rows.js';
import type { JobRequest } from '../domain/resources.js';
import { TERMINAL_PHASES } from '../domain/resources.js';
import { endAssignments } from './assignments.js';

export type SubmitResult = { outcome: 'created' | 'unchanged'; job: JobRow } | { outcome: 'conflict'; job: JobRow };

export async function submitJob(db: Db, job: JobRequest): Promise<SubmitResult> {
  return (await transaction(db, (tx) => submitInTx(tx, [job])))[0]!;
}

/**
 * Several jobs in one transaction: all are accepted or none. The first conflict (a name taken
 * by a job with another spec) rolls back the rest and comes back as the result.
 */
export async function submitJobs(db: Db, jobs: readonly JobRequest[]): Promise<{ outcome: 'accepted'; results: SubmitResult[] } | { outcome: 'conflict'; job: JobRow }> {
  try {
    return await transaction(db, async (tx) => {
      const results = await submitInTx(tx, jobs);
      const conflict = results.find((r) => r.outcome === 'conflict');
      if (conflict) throw new SubmitConflict(conflict.job);
      return { outcome: 'accepted' as const, results };
    });
  } catch (error) {
    if (error instanceof SubmitConflict) return { outcome: 'conflict', job: error.job };
    throw error;
  }
}

class SubmitConflict extends Error {
  constructor(readonly job: JobRow) {
    super(`job ${job.namespace}/${job.name} already exists with a different spec`);
  }
}

/**
 * Inserts the jobs in one statement over arrays (a backlog of thousands is three round trips,
 * not thousands); a name already taken is 'unchanged' when the spec and labels are the same,
 * else 'conflict'. Results are in the jobs' order.
 */
async function submitInTx(tx: Tx, jobs: readonly JobRequest[]): Promise<SubmitResult[]> {
  const inserted = (
    await tx.query<JobRow>(sql('jobs/insert'), [
      jobs.map(() => randomUUID()),
      jobs.map((j) => j.namespace),
      jobs.map((j) => j.name),
      jobs.map((j) => JSON.stringify(j.labels)),
      jobs.map((j) => JSON.stringify(j.spec)),
      jobs.map((j) => j.cpuMillis),
      jobs.map((j) => j.memoryBytes),
      jobs.map((j) => j.durationMs),
      jobs.map((j) => JSON.stringify(j.nodeSelector)),
      jobs.map((j) => j.maxAttempts),
    ])
  ).rows;
  const key = (j: { namespace: string; name: string }) => `${j.namespace}/${j.name}`;
  const created = new Map(inserted.map((row) => [key(row), row]));
  const taken = jobs.filter((j) => !created.has(key(j)));
  const existing = new Map<string, JobRow>();
  if (taken.length > 0) {
    const rows = (await tx.query<JobRow>(sql('jobs/get_many'), [taken.map((j) => j.namespace), taken.map((j) => j.name)])).rows;
    for (const row of rows) existing.set(key(row), row);
  }
  if (inserted.length > 0) await tx.query(sql('jobs/notify_pending'));
  return jobs.map((job): SubmitResult => {
    const row = created.get(key(job));
    if (row) return { outcome: 'created', job: row };
    const other = existing.get(key(job))!;
    // jsonb reorders keys, so compare values, not text.
    const same = isDeepStrictEqual(other.spec, job.spec) && isDeepStrictEqual(other.labels, job.labels);
    return { outcome: same ? 'unchanged' : 'conflict', job: other };
  });
}

export async function getJob(db: Db, namespace: string, name: string): Promise<JobRow | undefined> {
  return (await db.query<JobRow>(sql('jobs/get'), [namespace, name])).rows[0];
}

export async function listJobs(db: Db, namespace: string | null): Promise<JobRow[]> {
  return (await db.query<JobRow>(sql('jobs/list'), [namespace])).rows;
}

export type UserActionResult = { outcome: 'done'; job: JobRow } | { outcome: 'not-found' } | { outcome: 'finished'; job: JobRow };

/** Cancels a job that has not finished; its node is told through its watch stream. */
export async function cancelJob(db: Db, namespace: string, name: string): Promise<UserActionResult> {
  return transaction(db, async (tx) => {
    const locked = (await tx.query<JobRow>(sql('jobs/lock_by_name'), [namespace, name])).rows[0];
    if (!locked) return { outcome: 'not-found' };
    if (TERMINAL_PHASES.includes(locked.phase)) {
      return { outcome: 'finished', job: (await tx.query<JobRow>(sql('jobs/get'), [namespace, name])).rows[0]! };
    }
    await withdrawAssignment(tx, locked.assignment_id, 'Cancelled');
    const job = (await tx.query<JobRow>(sql('jobs/cancel'), [locked.uid])).rows[0]!;
    return { outcome: 'done', job };
  });
}

/** Deletes a job (cancelling it first if it runs). Its history stays. */
export async function deleteJob(db: Db, namespace: string, name: string): Promise<UserActionResult> {
  return transaction(db, async (tx) => {
    const locked = (await tx.query<JobRow>(sql('jobs/lock_by_name'), [namespace, name])).rows[0];
    if (!locked) return { outcome: 'not-found' };
    if (!TERMINAL_PHASES.includes(locked.phase)) await withdrawAssignment(tx, locked.assignment_id, 'Cancelled');
    const job = (await tx.query<JobRow>(sql('jobs/delete'), [locked.uid])).rows[0]!;
    return { outcome: 'done', job };
  });
}

async function withdrawAssignment(tx: Tx, assignmentId: string | null, endState: 'Cancelled'): Promise<void> {
  if (!assignmentId) return;
  await endAssignments(tx, [assignmentId], endState, null);
}
