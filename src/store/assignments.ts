// Assignments: what nodes report (any replica), and ending assignments (shared by reports,
// user actions and the leader's controllers). The guard for reports is the row condition:
// only an active assignment of that node changes; anything else is a 409 for the node.
import type { Db, Tx } from './db.js';
import { transaction } from './db.js';
import { sql } from './sql.js';
import type { EndedAssignment, JobRow } from './rows.js';
import type { AssignmentMessage } from '../domain/assignment.js';

export type EndState = 'Succeeded' | 'Failed' | 'Lost' | 'Unconfirmed' | 'Cancelled';

/**
 * Ends the given assignments if still active (on `node`, when given), gives their resources back
 * to their nodes and tells those nodes. Callers lock the jobs first. Returns what ended.
 */
export async function endAssignments(tx: Tx, ids: string[], endState: EndState, node: string | null): Promise<EndedAssignment[]> {
  const ended =
    endState === 'Unconfirmed'
      ? (await tx.query<EndedAssignment>(sql('assignments/end_unconfirmed'), [ids])).rows
      : (await tx.query<EndedAssignment>(sql('assignments/end'), [ids, endState, node])).rows;
  return releaseEnded(tx, ended);
}

/** Gives back what ended assignments held, and tells their nodes. */
async function releaseEnded(tx: Tx, ended: EndedAssignment[]): Promise<EndedAssignment[]> {
  if (ended.length === 0) return ended;
  await tx.query(sql('nodes/release'), [
    ended.map((a) => a.node),
    ended.map((a) => a.cpu_millis),
    ended.map((a) => a.memory_bytes),
  ]);
  await tx.query(sql('nodes/notify'), [ended.map((a) => a.node)]);
  return ended;
}

export type ReportResult = { outcome: 'ok'; job: JobRow | undefined } | { outcome: 'not-active' };

async function lockJobOf(tx: Tx, assignmentId: string): Promise<string | undefined> {
  const assignment = (await tx.query<{ job_uid: string }>(sql('assignments/get'), [assignmentId])).rows[0];
  if (!assignment) return undefined;
  await tx.query(sql('jobs/lock'), [[assignment.job_uid]]);
  return assignment.job_uid;
}

export async function reportStarted(db: Db, assignmentId: string, node: string): Promise<ReportResult> {
  return transaction(db, (tx) => applyStarted(tx, assignmentId, node));
}

export async function reportFinished(
  db: Db,
  assignmentId: string,
  node: string,
  outcome: 'Succeeded' | 'Failed',
  message: string | null,
): Promise<ReportResult> {
  return transaction(db, (tx) => applyFinished(tx, assignmentId, node, outcome, message));
}

/**
 * The node stopped the job on its own (it fenced itself, or shut down). The assignment ends as
 * Lost and its resources go back; the job itself is given back by the leader (job-reconcile),
 * as every retry decision is.
 */
export async function reportAbandoned(db: Db, assignmentId: string, node: string): Promise<ReportResult> {
  return transaction(db, (tx) => applyAbandoned(tx, assignmentId, node));
}

/** One of a node's reports, as a batch carries it. */
export type NodeReport =
  | { kind: 'started'; id: string }
  | { kind: 'finished'; id: string; outcome: 'Succeeded' | 'Failed'; message: string | null }
  | { kind: 'abandoned'; id: string };

/**
 * A node's reports in one request, in the order given (a job's start before its end). Each is
 * its own transaction: one job's report never waits on, or rolls back with, another's.
 */
export async function applyReports(db: Db, node: string, reports: readonly NodeReport[]): Promise<Array<ReportResult['outcome']>> {
  const outcomes: Array<ReportResult['outcome']> = [];
  for (const report of reports) {
    const result = await transaction(db, (tx) => {
      if (report.kind === 'started') return applyStarted(tx, report.id, node);
      if (report.kind === 'finished') return applyFinished(tx, report.id, node, report.outcome, report.message);
      return applyAbandoned(tx, report.id, node);
    });
    outcomes.push(result.outcome);
  }
  return outcomes;
}

async function applyStarted(tx: Tx, assignmentId: string, node: string): Promise<ReportResult> {
  const jobUid = await lockJobOf(tx, assignmentId);
  if (!jobUid) return { outcome: 'not-active' };
  const started = await tx.query(sql('assignments/start'), [assignmentId, node]);
  if (started.rowCount === 0) return { outcome: 'not-active' };
  const job = (await tx.query<JobRow>(sql('jobs/set_phase'), [jobUid, assignmentId, 'Running', null, null])).rows[0];
  return { outcome: 'ok', job };
}

async function applyFinished(tx: Tx, assignmentId: string, node: string, outcome: 'Succeeded' | 'Failed', message: string | null): Promise<ReportResult> {
  const jobUid = await lockJobOf(tx, assignmentId);
  if (!jobUid) return { outcome: 'not-active' };
  const ended = await endAssignments(tx, [assignmentId], outcome, node);
  if (ended.length === 0) return { outcome: 'not-active' };
  const reason = outcome === 'Succeeded' ? 'Completed' : 'Error';
  const job = (await tx.query<JobRow>(sql('jobs/set_phase'), [jobUid, assignmentId, outcome, reason, message])).rows[0];
  return { outcome: 'ok', job };
}

async function applyAbandoned(tx: Tx, assignmentId: string, node: string): Promise<ReportResult> {
  const jobUid = await lockJobOf(tx, assignmentId);
  if (!jobUid) return { outcome: 'not-active' };
  const ended = await endAssignments(tx, [assignmentId], 'Lost', node);
  if (ended.length === 0) return { outcome: 'not-active' };
  return { outcome: 'ok', job: undefined };
}

interface ActiveRow {
  id: string;
  job_uid: string;
  job: string;
  epoch: number;
  attempt: number;
  cpu_millis: number;
  memory_bytes: number;
  duration_ms: number;
  state: 'Assigned' | 'Running';
}

export async function activeAssignments(db: Db, node: string): Promise<AssignmentMessage[]> {
  const rows = (await db.query<ActiveRow>(sql('assignments/active_on_node'), [node])).rows;
  return rows.map((r) => ({
    id: r.id,
    jobUid: r.job_uid,
    job: r.job,
    epoch: r.epoch,
    attempt: r.attempt,
    cpuMillis: r.cpu_millis,
    memoryBytes: r.memory_bytes,
    durationMs: r.duration_ms,
    state: r.state,
  }));
}
