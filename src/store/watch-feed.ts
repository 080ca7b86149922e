// The watch feed (migration 0013): where a list stands, where a resourceVersion resumes, the
// events after a position in watch order, and forgetting old ones (the leader's).
import type { Db, Tx } from './db.js';
import { sql } from './sql.js';
import { isBroken } from '../testing/broken-guards.js';

/** A place in the watch order: an event's xid (as text: xid8 exceeds 2^53) and id. */
export interface WatchPosition {
  xid: string;
  id: number;
}

export interface WatchEvent extends WatchPosition {
  kind: string;
  namespace: string | null;
  name: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: { uid?: string; labels?: Record<string, string> } | null;
}

/** The resourceVersion of a list read after this call. */
export async function listVersion(db: Db): Promise<number> {
  return (await db.query<{ rv: number }>(sql('watch/list_version'), [isBroken('watch-xmin')])).rows[0]!.rv;
}

/** Where a watch from `rv` resumes; 'gone' when that event is no longer kept (or never was). */
export async function positionOf(db: Db, rv: number): Promise<WatchPosition | 'gone'> {
  if (rv === 0) return { xid: '0', id: 0 };
  const row = (await db.query<{ xid: string | null; oldest: number | null }>(sql('watch/position'), [rv])).rows[0]!;
  return row.xid === null ? 'gone' : { xid: row.xid, id: rv };
}

export async function eventsAfter(db: Db, from: WatchPosition, limit: number): Promise<WatchEvent[]> {
  return (await db.query<WatchEvent>(sql('watch/next'), [from.xid, from.id, limit, isBroken('watch-xmin')])).rows;
}

/** How many events older than keepSeconds were forgotten (at most `limit`). */
export async function pruneWatchEvents(tx: Tx, keepSeconds: number, limit: number): Promise<number> {
  return (await tx.query(sql('watch/prune'), [keepSeconds, limit])).rowCount ?? 0;
}
