// Nodes as the API sees them: register, heartbeat, watch sessions (any replica).
import type { Db } from './db.js';
import { transaction } from './db.js';
import { sql } from './sql.js';
import type { NodeRow } from './rows.js';
import { endAssignments } from './assignments.js';
import { StaleIncarnationError } from '../errors/stale-incarnation-error.js';
import { isBroken } from '../testing/broken-guards.js';
import { DEFAULT_MAX_JOBS } from '../domain/resources.js';

/**
 * A node (re)registers. When it comes back as a new process (another incarnation), what the
 * previous process held is gone with it: those assignments end as Lost, as if the node had said
 * so, and the leader retries their jobs (job-reconcile). A registration from a process older than
 * the registered one (a lower generation: a request that reached a replica late, after the node
 * restarted) is refused with StaleIncarnationError and changes nothing.
 */
export async function registerNode(
  db: Db,
  name: string,
  cpuMillis: number,
  memoryBytes: number,
  labels: Record<string, string>,
  incarnation: string | null = null,
  generation: number | null = null,
  images: readonly string[] = [],
  maxJobs: number = DEFAULT_MAX_JOBS,
): Promise<NodeRow> {
  if (isBroken('registration-generation')) generation = null; // broken on purpose (src/testing/broken-guards.ts)
  return transaction(db, async (tx) => {
    // The heartbeat row first: the lock order of declaring a node dead (heartbeat, jobs, node).
    await tx.query(sql('nodes/heartbeat'), [name]);
    const previous = (
      await tx.query<NodeRow & { incarnation: string | null; generation: string | null }>(sql('nodes/get'), [name])
    ).rows[0];
    const current = previous?.generation == null ? null : Number(previous.generation);
    if (generation !== null && current !== null && generation < current)
      throw new StaleIncarnationError(name, generation, current);
    if (previous && incarnation && previous.incarnation !== incarnation) {
      const held = (await tx.query<{ job_uid: string; id: string }>(sql('assignments/active_job_uids_on_node'), [name]))
        .rows;
      if (held.length > 0) {
        await tx.query(sql('jobs/lock'), [held.map((h) => h.job_uid)]);
        await endAssignments(
          tx,
          held.map((h) => h.id),
          'Lost',
          name,
        );
      }
    }
    // The upsert re-checks the generation on the row it locks: a newer process may have registered meanwhile.
    const row = (
      await tx.query<NodeRow>(sql('nodes/register'), [
        name,
        cpuMillis,
        memoryBytes,
        labels,
        incarnation,
        generation,
        images,
        maxJobs,
      ])
    ).rows[0];
    if (!row) throw new StaleIncarnationError(name, generation ?? 0, current ?? 0);
    return row;
  });
}

/**
 * 'unknown' when no such node; 'Dead' when the node must re-register. The state is read after
 * the heartbeat row's lock was had (fencer_heartbeat(), migration 0005), so a death that was
 * being declared meanwhile is the answer (410), never a stale 'Ready'.
 */
export async function heartbeat(db: Db, name: string): Promise<'Ready' | 'Dead' | 'unknown'> {
  const query = isBroken('heartbeat-forward') ? 'nodes/beat_backwards' : 'nodes/beat'; // broken on purpose (src/testing/broken-guards.ts)
  const row = (await db.query<{ state: 'Ready' | 'Dead' | null }>(sql(query), [name])).rows[0];
  return row?.state ?? 'unknown';
}

export async function openWatch(
  db: Db,
  name: string,
  session: string,
  replica: string,
  attempt: number | null = null,
  incarnation: string | null = null,
): Promise<'Ready' | 'Dead' | 'unknown' | 'superseded'> {
  const row = (
    await db.query<{ state: 'Ready' | 'Dead'; superseded: boolean }>(sql('nodes/watch_open'), [
      name,
      session,
      replica,
      attempt,
      incarnation,
    ])
  ).rows[0];
  if (!row) return 'unknown';
  if (row.state === 'Dead') return 'Dead';
  return row.superseded ? 'superseded' : 'Ready';
}

export async function closeWatch(db: Db, name: string, session: string): Promise<void> {
  await db.query(sql('nodes/watch_close'), [name, session]);
}

export async function listNodes(db: Db): Promise<NodeRow[]> {
  return (await db.query<NodeRow>(sql('nodes/list'))).rows;
}
