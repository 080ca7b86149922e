// node-health's reads and writes: which nodes look dead, how many are quiet at once, and the
// leader's declaring one dead, inside a fenced transaction (the caller's `tx`) that re-checks
// the row conditions it depends on and locks in the order job, assignment, node.
import type { Db, Tx } from '../store/db.js';
import { sql } from '../store/sql.js';
import { endAssignments } from '../store/assignments.js';
import { retryJobs } from '../job-reconcile/store.js';
import { isBroken } from '../testing/broken-guards.js';

/** When a node looks dead (node-health/dead_candidates.sql says how they combine). */
export interface DeathRule {
  silentMs: number;
  disconnectedMs: number;
  disconnectedQuietMs: number;
}

export async function deadNodeCandidates(db: Db, rule: DeathRule): Promise<Array<{ name: string; reason: string }>> {
  return (
    await db.query<{ name: string; reason: string }>(sql('node-health/dead_candidates'), [
      rule.silentMs,
      rule.disconnectedMs,
      rule.disconnectedQuietMs,
    ])
  ).rows;
}

/** Ready nodes, and how many of them have been quiet longer than `quietMs`. */
export async function nodeSuspects(db: Db, quietMs: number): Promise<{ ready: number; suspect: number }> {
  return (await db.query<{ ready: number; suspect: number }>(sql('node-health/suspects'), [quietMs])).rows[0]!;
}

/**
 * Declares a node dead if it still looks dead, and gives its jobs back: each is retried (using
 * an attempt) or fails when out of attempts. Returns the number of jobs given back, or null
 * when the node turned out alive.
 */
export async function declareNodeDead(tx: Tx, node: string, rule: DeathRule, reason: string): Promise<number | null> {
  // Its heartbeat row first: a heartbeat in flight lands before the re-check below, and one
  // that comes later waits and is told the node is dead.
  if (!isBroken('death-heartbeat-lock')) await tx.query(sql('node-health/lock_heartbeat'), [node]);
  const held = (await tx.query<{ job_uid: string; id: string }>(sql('assignments/active_job_uids_on_node'), [node]))
    .rows;
  await tx.query(sql('jobs/lock'), [held.map((h) => h.job_uid)]);
  const declared = await tx.query(sql('node-health/declare_dead'), [
    node,
    rule.silentMs,
    rule.disconnectedMs,
    reason,
    rule.disconnectedQuietMs,
  ]);
  if (declared.rowCount === 0) return null;
  const lost = await endAssignments(
    tx,
    held.map((h) => h.id),
    'Lost',
    node,
  );
  // A placement its node never claimed never ran: it goes back without using an attempt.
  await retryJobs(
    tx,
    lost.map((a) => ({
      ...a,
      cause: a.started_at ? 'disruption' : 'never-ran',
      reason: 'NodeDied',
      message: `node ${node} died: ${reason}`,
    })),
  );
  await tx.query(sql('nodes/notify'), [[node]]);
  return lost.length;
}
