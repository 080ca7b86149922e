// What nodes report about their assignments (any replica): claims and ends, in batches; and what
// a node's watch stream is sent (its snapshot) and when it was sent (the confirm deadline's
// start). The guard for reports is the row condition: only an active assignment of that node
// changes; anything else is a 409 for the node.
import type { Db, Tx } from '../store/db.js';
import { transaction } from '../store/db.js';
import { sql } from '../store/sql.js';
import type { EndedAssignment } from '../store/rows.js';
import type { EndState } from '../store/assignments.js';
import type { AssignmentMessage } from './messages.js';
import { parseDuration } from '../domain/duration.js';
import { isBroken } from '../testing/broken-guards.js';
import type { NodeIdentity } from '../domain/node-identity.js';
import { SupersededCredentialError } from '../errors/superseded-credential-error.js';
import { jobLatenessSeconds, jobStartSeconds, reportApplySeconds } from '../metrics/registry.js';

export type ReportOutcome = 'ok' | 'not-active';

/** One of a node's reports, as a batch carries it. */
export type NodeReport =
  | { kind: 'started'; id: string }
  | { kind: 'finished'; id: string; outcome: 'Succeeded' | 'Failed'; message: string | null }
  | { kind: 'abandoned'; id: string; neverRan?: boolean };

export async function reportStarted(db: Db, assignmentId: string, node: string): Promise<ReportOutcome> {
  return only(await applyReports(db, node, [{ kind: 'started', id: assignmentId }]));
}

export async function reportFinished(
  db: Db,
  assignmentId: string,
  node: string,
  outcome: 'Succeeded' | 'Failed',
  message: string | null,
): Promise<ReportOutcome> {
  return only(await applyReports(db, node, [{ kind: 'finished', id: assignmentId, outcome, message }]));
}

/**
 * The node stopped the job on its own (it fenced itself, or shut down). The assignment ends as
 * Lost and its resources go back; the job itself is given back by the leader (job-reconcile),
 * as every retry decision is.
 */
export async function reportAbandoned(db: Db, assignmentId: string, node: string): Promise<ReportOutcome> {
  return only(await applyReports(db, node, [{ kind: 'abandoned', id: assignmentId }]));
}

function only(outcomes: ReportOutcome[]): ReportOutcome {
  return outcomes[0] ?? 'not-active';
}

/**
 * A node's reports in one transaction of a few statements over arrays, however many there are:
 * a hundred nodes each starting thirty jobs cost a hundred short transactions, not three
 * thousand. Starts apply before ends, so a short job's start and finish may share a batch. The
 * guard is each statement's row condition: only an active assignment of this node changes; any
 * other report is answered 'not-active' and changes nothing. Outcomes are in the reports' order.
 * With the reporting credential's `identity`, a process the node has since replaced is refused
 * (SupersededCredentialError) and nothing changes.
 */
export async function applyReports(
  db: Db,
  node: string,
  reports: readonly NodeReport[],
  identity: NodeIdentity | null = null,
): Promise<ReportOutcome[]> {
  if (reports.length === 0) return [];
  const ended = new Set<string>();
  const applying = reportApplySeconds.startTimer();
  const checked = isBroken('node-credential-row') ? null : identity; // broken on purpose (src/testing/broken-guards.ts)
  const starts = await transaction(db, async (tx) => {
    // The credential's process checked against the node's row in the statement that locks the jobs.
    const lock = await tx.query<{ current: boolean }>(sql('agent-protocol/lock_jobs'), [
      reports.map((r) => r.id),
      node,
      checked?.incarnation ?? null,
      checked?.generation ?? null,
    ]);
    if (checked && !lock.rows[0]?.current) throw new SupersededCredentialError(node);
    const startedNow = await startAll(tx, node, reports);
    ended.clear(); // a transaction tried again starts afresh
    for (const id of await endAll(tx, node, reports)) ended.add(id);
    return startedNow;
  });
  applying();
  const started = new Set(starts.map((s) => s.id));
  for (const s of starts) {
    if (s.since_placed !== null) jobStartSeconds.observe(Math.max(0, s.since_placed));
    if (s.since_due !== null) jobLatenessSeconds.observe(Math.max(0, s.since_due));
  }
  const endedOnce = new Set<string>();
  return reports.map((r) => {
    if (r.kind === 'started') return started.has(r.id) ? 'ok' : 'not-active';
    // One assignment ends once: a repeated end report in the same batch is not-active.
    if (!ended.has(r.id) || endedOnce.has(r.id)) return 'not-active';
    endedOnce.add(r.id);
    return 'ok';
  });
}

/** An assignment sent to its node for the first time, `agoMs` before now. */
export interface Delivery {
  id: string;
  node: string;
  agoMs: number;
}

/** These assignments were sent to their nodes: each one's confirm deadline runs from its send. */
export async function markDelivered(db: Db, sent: readonly Delivery[], confirmTimeoutMs: number): Promise<void> {
  if (sent.length === 0) return;
  // Broken on purpose (src/testing/broken-guards.ts, delivery-skip-locked): wait for every row.
  await db.query(
    sql(isBroken('delivery-skip-locked') ? 'agent-protocol/delivered_waiting' : 'agent-protocol/delivered'),
    [
      sent.map((d) => d.id),
      sent.map((d) => d.node),
      sent.map((d) => Math.max(0, Math.round(d.agoMs))),
      confirmTimeoutMs,
    ],
  );
}

interface Started {
  id: string;
  /** Seconds since its placement and since its job was due, at its first start (else null). */
  since_placed: number | null;
  since_due: number | null;
}

async function startAll(tx: Tx, node: string, reports: readonly NodeReport[]): Promise<Started[]> {
  const ids = reports.filter((r) => r.kind === 'started').map((r) => r.id);
  if (ids.length === 0) return [];
  // Also the jobs' Running phase, and placement told of the room a claim makes: one round trip.
  return (await tx.query<Started>(sql('agent-protocol/start'), [ids, node])).rows;
}

async function endAll(tx: Tx, node: string, reports: readonly NodeReport[]): Promise<string[]> {
  const ends = new Map<string, Exclude<NodeReport, { kind: 'started' }>>();
  for (const r of reports) if (r.kind !== 'started' && !ends.has(r.id)) ends.set(r.id, r);
  if (ends.size === 0) return [];
  // A claim the node gave back without running it (answered too late) was never confirmed in
  // effect: it ends Unconfirmed, and its job goes back without using an attempt.
  const endState = (r: Exclude<NodeReport, { kind: 'started' }>): EndState =>
    r.kind === 'finished' ? r.outcome : r.neverRan ? 'Unconfirmed' : 'Lost';
  const messages = [...ends.values()].map((r) => (r.kind === 'finished' ? r.message : null));
  const rows = (
    await tx.query<EndedAssignment>(sql('agent-protocol/end_reported'), [
      [...ends.keys()],
      [...ends.values()].map(endState),
      node,
      messages,
    ])
  ).rows;
  // (the nodes told, jobs that succeeded done and the leader told of other ends, in that statement)
  // The others had ended already: if cancelled while running, the node has now stopped them.
  const ended = new Set(rows.map((a) => a.id));
  const stopped = [...ends.keys()].filter((id) => !ended.has(id));
  if (stopped.length > 0 && (await tx.query(sql('agent-protocol/release_holds'), [stopped, node])).rowCount! > 0)
    await tx.query(sql('placement/notify_room'));
  return rows.map((a) => a.id);
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
  fail_exit_code: number | null;
  fail_after: string | null;
  undelivered: boolean;
}

/**
 * A node's snapshot, for its watch stream: its active assignments, and those never sent to it yet
 * (whose confirm deadline starts when they are: markDelivered).
 */
export async function snapshotFor(
  db: Db,
  node: string,
  session: string,
): Promise<{ ours: boolean; assignments: AssignmentMessage[]; undelivered: string[] }> {
  const unchecked = isBroken('watch-session-check'); // broken on purpose (src/testing/broken-guards.ts)
  const read = (
    await db.query<ActiveRow & { ours: boolean }>(sql('agent-protocol/active_on_node'), [node, session, unchecked])
  ).rows;
  const ours = unchecked || (read[0]?.ours ?? false);
  const rows = read.filter((r) => r.id !== null);
  const undelivered = rows.filter((r) => r.undelivered).map((r) => r.id);
  return {
    ours,
    undelivered,
    assignments: rows.map((r) => ({
      id: r.id,
      jobUid: r.job_uid,
      job: r.job,
      epoch: r.epoch,
      attempt: r.attempt,
      cpuMillis: r.cpu_millis,
      memoryBytes: r.memory_bytes,
      durationMs: r.duration_ms,
      state: r.state,
      ...(r.fail_exit_code === null
        ? {}
        : { failExitCode: r.fail_exit_code, failAfterMs: parseDuration(r.fail_after ?? '') ?? r.duration_ms }),
    })),
  };
}
