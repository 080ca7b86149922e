// job-reconcile's reads and writes: placements their node never claimed, runs past their end with
// no report, and jobs whose run ended without success; and the one writer of retries, which
// node-health's deaths use too. Each write runs inside a fenced transaction (the caller's `tx`),
// re-checks the row conditions it depends on, and locks in the order job, assignment, node.
import type { Db, Tx } from '../store/db.js';
import { sql } from '../store/sql.js';
import type { EndedAssignment } from '../store/rows.js';
import { endAssignments, notifyEnded } from '../store/assignments.js';
import { decideRetry, type FailureCause } from './retry.js';

/** How long placements may wait for their node: claimed within the confirm timeout of being sent, and sent within undeliveredMs. */
export interface ConfirmRule {
  confirmTimeoutMs: number;
  undeliveredMs: number;
}

export async function unconfirmedAssignments(
  db: Db,
  limit: number,
  rule: ConfirmRule,
): Promise<Array<{ id: string; job_uid: string }>> {
  return (
    await db.query<{ id: string; job_uid: string }>(sql('job-reconcile/unconfirmed'), [limit, rule.undeliveredMs])
  ).rows;
}

/** Ends those of these placements still unclaimed past their deadline (job-reconcile/unconfirmed says which). */
export async function endUnconfirmed(tx: Tx, ids: string[], undeliveredMs: number): Promise<EndedAssignment[]> {
  return notifyEnded(
    tx,
    (await tx.query<EndedAssignment>(sql('job-reconcile/end_unconfirmed'), [ids, undeliveredMs])).rows,
  );
}

/** Gives back placements their node never confirmed; this uses no attempt. */
export async function returnUnconfirmed(
  tx: Tx,
  assignments: Array<{ id: string; job_uid: string }>,
  rule: ConfirmRule,
): Promise<number> {
  if (assignments.length === 0) return 0;
  await tx.query(sql('jobs/lock'), [assignments.map((a) => a.job_uid)]);
  const ended = await endUnconfirmed(
    tx,
    assignments.map((a) => a.id),
    rule.undeliveredMs,
  );
  const message = `the node did not claim the assignment within ${rule.confirmTimeoutMs} ms of its being sent to it (or it could not be sent for ${rule.undeliveredMs} ms)`;
  await retryJobs(
    tx,
    ended.map((a) => ({ ...a, cause: 'never-ran', reason: 'NotConfirmed', message })),
  );
  return ended.length;
}

export async function overdueAssignments(
  db: Db,
  limit: number,
  slackMs: number,
): Promise<Array<{ id: string; job_uid: string; node: string }>> {
  return (await db.query<{ id: string; job_uid: string; node: string }>(sql('job-reconcile/overdue'), [limit, slackMs]))
    .rows;
}

/**
 * Ends runs their live node never answered about, long after their end and after being asked
 * again and again, and retries their jobs: a disruption (the node lost the run), using no attempt.
 * Broken on purpose (src/testing/broken-guards.ts, not-reported-is-loss), called at the first silence with cause
 * 'job': a late report taken for a failure.
 */
export async function expireOverdue(
  tx: Tx,
  assignments: ReadonlyArray<{ id: string; job_uid: string }>,
  as: { cause: 'job' | 'disruption'; waitedMs: number },
): Promise<number> {
  if (assignments.length === 0) return 0;
  await tx.query(sql('jobs/lock'), [assignments.map((a) => a.job_uid)]);
  const ended = await endAssignments(
    tx,
    assignments.map((a) => a.id),
    'Lost',
    null,
  );
  const message = `the node said nothing about the run for ${as.waitedMs} ms past its end, asked again and again`;
  await retryJobs(
    tx,
    ended.map((a) => ({ ...a, cause: as.cause, reason: 'NotReported', message })),
  );
  return ended.length;
}

/**
 * A run past its end with no report from its live node is a question to the node, never a
 * failure: its watch is sent a snapshot now, and the node says again how each run it no longer
 * runs ended (agent: settleForgotten). The run stays active meanwhile, so nothing places it again
 * while its node may still run it; if the node dies, node-health ends it.
 */
export async function askAboutOverdue(db: Db, nodes: readonly string[]): Promise<void> {
  if (nodes.length > 0) await db.query(sql('nodes/notify'), [nodes]);
}

export interface Orphan {
  id: string;
  job_uid: string;
  /** how the assignment ended: Failed (the job failed), Lost (the node gave it up), Unconfirmed (never ran) */
  state: string;
  /** what the node said of a failed run */
  message: string | null;
}

export async function orphanedJobs(db: Db, limit: number): Promise<Orphan[]> {
  return (await db.query<Orphan>(sql('job-reconcile/orphaned'), [limit])).rows;
}

/**
 * Decides for jobs whose run ended without success: a failed run by the job's retry policy, a
 * run its node stopped (it fenced itself or shut down) as a disruption, a claim given back unrun
 * without using an attempt.
 */
export async function retryOrphaned(tx: Tx, orphans: Orphan[]): Promise<number> {
  if (orphans.length === 0) return 0;
  await retryJobs(
    tx,
    orphans.map((o) => ({ id: o.id, job_uid: o.job_uid, cause: 'as-ended' })),
  );
  return orphans.length;
}

/** Why a run that ended without success did, from how its assignment ended (read under the job's lock). */
function endedRun(
  state: string | null,
  message: string | null,
): { cause: FailureCause; reason: string; message: string } {
  if (state === 'Unconfirmed')
    return {
      cause: 'never-ran',
      reason: 'NotConfirmed',
      message: 'the node gave the placement back unrun: its claim was answered too late',
    };
  if (state === 'Failed') return { cause: 'job', reason: 'Error', message: message ?? 'the job failed' };
  return {
    cause: 'disruption',
    reason: 'NodeLost',
    message: 'the node stopped the job before it finished (it fenced itself or shut down)',
  };
}

/**
 * A run that ended without success, and why: what a retry decision starts from. `as-ended`: the
 * cause follows from how the assignment ended, read in the deciding transaction (endedRun).
 */
export type EndedRun =
  | { id: string; job_uid: string; cause: FailureCause; reason: string; message: string }
  | { id: string; job_uid: string; cause: 'as-ended'; reason?: undefined; message?: undefined };

interface RetryFacts {
  uid: string;
  assignment_state: string | null;
  assignment_message: string | null;
  attempt: number;
  max_attempts: number;
  disruptions: number;
  max_disruptions: number;
  retry_policy: 'OnFailure' | 'Never';
  backoff_base_ms: number;
  backoff_cap_ms: number;
}

/**
 * The one writer of retries, backoff and dead letters: decides each job (src/job-reconcile/retry.ts)
 * and stores the answer, the due time included, in the caller's fenced transaction.
 */
export async function retryJobs(tx: Tx, runs: EndedRun[]): Promise<void> {
  if (runs.length === 0) return;
  const facts = new Map(
    (await tx.query<RetryFacts>(sql('job-reconcile/retry_facts'), [runs.map((r) => r.job_uid)])).rows.map((f) => [
      f.uid,
      f,
    ]),
  );
  const decided = runs.flatMap((given) => {
    const f = facts.get(given.job_uid);
    if (!f) return [];
    const run =
      given.cause === 'as-ended' ? { ...given, ...endedRun(f.assignment_state, f.assignment_message) } : given;
    const decision = decideRetry({
      cause: run.cause,
      attempt: f.attempt,
      maxAttempts: f.max_attempts,
      disruptions: f.disruptions,
      maxDisruptions: f.max_disruptions,
      retryPolicy: f.retry_policy,
      backoffBaseMs: f.backoff_base_ms,
      backoffCapMs: f.backoff_cap_ms,
    });
    return [{ run, decision, f }];
  });
  await tx.query(sql('job-reconcile/retry'), [
    decided.map((d) => d.run.job_uid),
    decided.map((d) => d.run.id),
    decided.map((d) => (d.decision.kind === 'retry' ? 'Pending' : d.decision.kind === 'failed' ? 'Failed' : 'Dead')),
    decided.map((d) => d.decision.kind === 'retry' && d.decision.usesAttempt),
    decided.map((d) => (d.decision.kind === 'retry' ? d.decision.delayMs : 0)),
    decided.map((d) =>
      d.decision.kind === 'dead' && d.decision.by === 'disruptions' ? 'TooManyDisruptions' : d.run.reason,
    ),
    decided.map((d) => {
      const { decision, run, f } = d;
      if (decision.kind === 'dead' && decision.by === 'disruptions')
        return `${run.message}; its nodes lost ${f.disruptions + 1} of its runs (maxDisruptions ${f.max_disruptions})`;
      if (decision.kind === 'dead') return `${run.message}; no attempts left (${f.attempt} of ${f.max_attempts} used)`;
      if (decision.kind === 'retry' && decision.delayMs > 0)
        return `${run.message}; attempt ${f.attempt + 1} of ${f.max_attempts} after a backoff of ${decision.delayMs} ms`;
      return run.message;
    }),
    decided.map((d) => d.run.cause === 'disruption'),
  ]);
}
