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
  return transaction(db, (tx) => submitInTx(tx, job));
}

/**
 * Several jobs in one transaction: all are accepted or none. The first conflict (a name taken
 * by a job with another spec) rolls back the rest and comes back as the result.
 */
export async function submitJobs(db: Db, jobs: readonly JobRequest[]): Promise<{ outcome: 'accepted'; results: SubmitResult[] } | { outcome: 'conflict'; job: JobRow }> {
  try {
    return await transaction(db, async (tx) => {
      const results: SubmitResult[] = [];
      for (const job of jobs) {
        const result = await submitInTx(tx, job);
        if (result.outcome === 'conflict') throw new SubmitConflict(result.job);
        results.push(result);
      }
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

async function submitInTx(tx: Tx, job: JobRequest): Promise<SubmitResult> {
  const inserted = await tx.query<JobRow>(sql('jobs/insert'), [
    randomUUID(),
    job.namespace,
    job.name,
    job.labels,
    job.spec,
    job.cpuMillis,
    job.memoryBytes,
    job.durationMs,
    job.nodeSelector,
    job.maxAttempts,
  ]);
  if (inserted.rows[0]) {
    await tx.query(sql('jobs/notify_pending'));
    return { outcome: 'created', job: inserted.rows[0] };
  }
  const existing = (await tx.query<JobRow>(sql('jobs/get'), [job.namespace, job.name])).rows[0]!;
  // jsonb reorders keys, so compare values, not text.
  const same = isDeepStrictEqual(existing.spec, job.spec) && isDeepStrictEqual(existing.labels, job.labels);
  return { outcome: same ? 'unchanged' : 'conflict', job: existing };
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
