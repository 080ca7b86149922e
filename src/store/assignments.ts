// Ending assignments, shared by a node's registration, user actions and the leader's controllers
// (what nodes report is the agent protocol's: src/agent-protocol/reports-store.ts).
import type { Tx } from './db.js';
import { sql } from './sql.js';
import type { EndedAssignment } from './rows.js';
import { isBroken } from '../testing/broken-guards.js';

export type EndState = 'Succeeded' | 'Failed' | 'Lost' | 'Unconfirmed' | 'Cancelled';

/**
 * Ends the given assignments if still active (on `node`, when given) and tells their nodes (what
 * they held goes back by the assignments' trigger, migration 0006). Callers lock the jobs first.
 * Returns what ended.
 */
export async function endAssignments(
  tx: Tx,
  ids: string[],
  endState: Exclude<EndState, 'Cancelled' | 'Unconfirmed'>,
  node: string | null,
): Promise<EndedAssignment[]> {
  return notifyEnded(tx, (await tx.query<EndedAssignment>(sql('assignments/end'), [ids, endState, node, null])).rows);
}

/**
 * Ends assignments a user cancelled (a job or a workflow cancelled or deleted). A run its node
 * had started keeps holding its queue's and namespace's share until its duration plus
 * `overdueSlackMs` after it started: the node hears of the cancel through its watch stream,
 * which may be late, and another job of the queue must not start elsewhere meanwhile.
 */
export async function withdrawAssignments(tx: Tx, ids: string[], overdueSlackMs: number): Promise<EndedAssignment[]> {
  if (ids.length === 0) return [];
  const hold = isBroken('cancel-hold') ? null : overdueSlackMs;
  return notifyEnded(
    tx,
    (await tx.query<EndedAssignment>(sql('assignments/end'), [ids, 'Cancelled', null, hold])).rows,
  );
}

/**
 * Tells the nodes of assignments the control plane ended (a node's death, a claim never made, a
 * cancel; their watch streams send a fresh snapshot), and the leader, since each such end is an
 * outcome to decide on. A node's own reports tell both in agent-protocol/end_reported.sql.
 */
export async function notifyEnded(tx: Tx, ended: EndedAssignment[]): Promise<EndedAssignment[]> {
  if (ended.length === 0) return ended;
  await tx.query(sql('nodes/notify'), [ended.map((a) => a.node)]);
  await tx.query(sql('jobs/notify_outcomes'));
  return ended;
}
