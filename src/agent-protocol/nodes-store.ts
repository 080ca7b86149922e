// Nodes as the API sees them: register, heartbeat, watch sessions (any replica); the join tokens
// a registration is let in with, and the list users read.
import { cutPage, type PageRequest, type RowsPage } from '../domain/list-pages.js';
import { pageParameters } from '../store/pages.js';
import { randomBytes } from 'node:crypto';
import type { Db, Tx } from '../store/db.js';
import { transaction } from '../store/db.js';
import { sql } from '../store/sql.js';
import type { NodeRow } from '../store/rows.js';
import { endAssignments } from '../store/assignments.js';
import { StaleIncarnationError } from '../errors/stale-incarnation-error.js';
import { isBroken } from '../testing/broken-guards.js';
import { DEFAULT_MAX_JOBS } from '../domain/resources.js';
import { GENERATION_SKEW_MS, type JoinToken, type NodeIdentity } from '../domain/node-identity.js';
import { SupersededCredentialError } from '../errors/superseded-credential-error.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import { JoinTokenNodeError } from '../errors/join-token-node-error.js';

/** What lets a registration in (./nodes-server.ts): a join token, or the node's current credential. */
export type RegistrationAuthority = { joinToken: JoinToken } | { credential: NodeIdentity };

/**
 * A node (re)registers. When it comes back as a new process (another incarnation), what the
 * previous process held is gone with it: those assignments end as Lost, as if the node had said
 * so, and the leader retries their jobs (job-reconcile). A registration from a process older than
 * the registered one (a lower generation: a request that reached a replica late, after the node
 * restarted) is refused with StaleIncarnationError and changes nothing.
 *
 * With an `authority` (every registration through the API but without authentication): a join
 * token that is unknown or expired is UnauthorizedError; a credential must be the node's current
 * one and of this incarnation (SupersededCredentialError otherwise), and keeps its generation.
 * A generation is clamped to the database's clock plus GENERATION_SKEW_MS; none is the clock.
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
  authority: RegistrationAuthority | null = null,
): Promise<NodeRow> {
  if (isBroken('registration-generation')) generation = null; // broken on purpose (src/testing/broken-guards.ts)
  return transaction(db, async (tx) => {
    if (authority && 'joinToken' in authority) await checkJoinToken(tx, authority.joinToken, name);
    // The heartbeat row first: the lock order of declaring a node dead (heartbeat, jobs, node).
    await tx.query(sql('agent-protocol/register_heartbeat'), [name]);
    const previous = (
      await tx.query<{ name: string | null; incarnation: string | null; generation: string | null; now_ms: string }>(
        sql('agent-protocol/registering'),
        [name],
      )
    ).rows[0]!;
    const current = previous.generation == null ? null : Number(previous.generation);
    if (authority && 'credential' in authority) {
      const { credential } = authority;
      if (
        previous.name === null ||
        previous.incarnation !== credential.incarnation ||
        current !== credential.generation ||
        incarnation !== credential.incarnation
      )
        throw new SupersededCredentialError(name);
      generation = credential.generation;
    } else if (authority) {
      const nowMs = Number(previous.now_ms);
      generation = Math.min(generation ?? nowMs, nowMs + GENERATION_SKEW_MS);
    }
    if (generation !== null && current !== null && generation < current)
      throw new StaleIncarnationError(name, generation, current);
    if (previous.name !== null && incarnation && previous.incarnation !== incarnation) {
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
      await tx.query<NodeRow>(sql('agent-protocol/register'), [
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
 * UnauthorizedError unless the join token is known and not expired; JoinTokenNodeError when it is
 * bound to a node name other than `name`. The registration checks it in its transaction.
 */
export async function checkJoinToken(db: Db | Tx, token: JoinToken, name: string): Promise<void> {
  const row = (
    await db.query<{ valid: boolean; node_name: string | null }>(sql('agent-protocol/join_token_check'), [
      token.id,
      token.secret,
    ])
  ).rows[0];
  if (!row) throw new UnauthorizedError(`join token ${token.id} is not known (or its secret is wrong)`);
  if (!row.valid) throw new UnauthorizedError(`join token ${token.id} expired`);
  // broken on purpose (src/testing/broken-guards.ts)
  if (row.node_name !== null && row.node_name !== name && !isBroken('join-token-node'))
    throw new JoinTokenNodeError(name, token.id, row.node_name);
}

/**
 * A join token that lets nodes register for `ttlMs` (only the node `node`, when given); `token`
 * registers one made elsewhere (a Secret's), else a new one is made. Throws when its id is taken
 * by another secret.
 */
export async function createJoinToken(
  db: Db,
  ttlMs: number,
  description = '',
  token: JoinToken = newJoinToken(),
  node: string | null = null,
): Promise<{ token: string; id: string; expiresAt: Date; node: string | null }> {
  const row = (
    await db.query<{ expires_at: Date; node_name: string | null }>(sql('agent-protocol/join_token_create'), [
      token.id,
      token.secret,
      Math.round(ttlMs),
      description,
      node,
    ])
  ).rows[0];
  if (!row) throw new Error(`join token id ${token.id} is already taken by another token`);
  return { token: `${token.id}.${token.secret}`, id: token.id, expiresAt: row.expires_at, node: row.node_name };
}

export interface JoinTokenRow {
  id: string;
  description: string;
  /** The one node it registers; null: any. */
  node_name: string | null;
  created_at: Date;
  expires_at: Date;
  expired: boolean;
}

/** Every join token (never its secret, which is kept only hashed), soonest to expire first. */
export async function listJoinTokens(db: Db): Promise<JoinTokenRow[]> {
  return (await db.query<JoinTokenRow>(sql('agent-protocol/join_token_list'))).rows;
}

/** Withdraws a join token; false when there was none of that id. */
export async function deleteJoinToken(db: Db, id: string): Promise<boolean> {
  return ((await db.query(sql('agent-protocol/join_token_delete'), [id])).rowCount ?? 0) > 0;
}

/** A new join token: 6 and 16 random characters of [a-z0-9]. */
export function newJoinToken(): JoinToken {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const pick = (n: number) => {
    let out = '';
    while (out.length < n) {
      // 252 = 7 × 36: bytes past it are dropped, so each character is uniform.
      for (const byte of randomBytes(n * 2)) if (byte < 252 && out.length < n) out += alphabet[byte % 36];
    }
    return out;
  };
  return { id: pick(6), secret: pick(16) };
}

/**
 * 'unknown' when no such node; 'Dead' when the node must re-register. The state is read after
 * the heartbeat row's lock was had (fencer_heartbeat(), migration 0005), so a death that was
 * being declared meanwhile is the answer (410), never a stale 'Ready'.
 */
export async function heartbeat(
  db: Db,
  name: string,
  identity: NodeIdentity | null = null,
): Promise<'Ready' | 'Dead' | 'unknown'> {
  // broken on purpose (src/testing/broken-guards.ts)
  const row = isBroken('heartbeat-forward')
    ? (await db.query<{ state: 'Ready' | 'Dead' | null }>(sql('agent-protocol/beat_backwards'), [name])).rows[0]
    : (
        await db.query<{ state: 'Ready' | 'Dead' | 'Superseded' | null }>(sql('agent-protocol/beat'), [
          name,
          identity?.incarnation ?? null,
          identity?.generation ?? null,
        ])
      ).rows[0];
  if (row?.state === 'Superseded') throw new SupersededCredentialError(name);
  return row?.state ?? 'unknown';
}

export async function openWatch(
  db: Db,
  name: string,
  session: string,
  replica: string,
  attempt: number | null = null,
  incarnation: string | null = null,
  generation: number | null = null,
): Promise<'Ready' | 'Dead' | 'unknown' | 'superseded'> {
  const row = (
    await db.query<{ state: 'Ready' | 'Dead'; current: boolean; superseded: boolean }>(
      sql('agent-protocol/watch_open'),
      [name, session, replica, attempt, incarnation, generation],
    )
  ).rows[0];
  if (!row) return 'unknown';
  if (!row.current && generation !== null) throw new SupersededCredentialError(name);
  if (row.state === 'Dead') return 'Dead';
  return row.superseded ? 'superseded' : 'Ready';
}

export async function closeWatch(db: Db, name: string, session: string): Promise<void> {
  await db.query(sql('agent-protocol/watch_close'), [name, session]);
}

export async function listNodes(db: Db): Promise<NodeRow[]> {
  return (await db.query<NodeRow>(sql('agent-protocol/node_list'), [null, null])).rows;
}

/** A page of listNodes' list (a node's key: no namespace, its name). */
export async function listNodePage(db: Db, page: PageRequest): Promise<RowsPage<NodeRow>> {
  const [, after, limit] = pageParameters(page);
  const rows = (await db.query<NodeRow>(sql('agent-protocol/node_list'), [after, limit])).rows;
  return cutPage(rows, page.limit, (node) => ({ namespace: '', name: node.name }));
}
