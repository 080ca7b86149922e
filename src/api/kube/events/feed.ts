// Where the Events stand, as lists and watches read them: a position is an id in each table
// (history, cluster_events), written as the resourceVersion "H.C". A list's cut is a position
// at which every row at or below it has ended, so a watch from it streams exactly what the list
// could not have; a watch goes on from its low-water marks (low-water.ts), one poll at a time.
import type { Db } from '../../../store/db.js';
import type { ClusterEventRow } from '../../../store/cluster-events.js';
import {
  clusterEventsAfter,
  historyAfter,
  lastEventIds,
  oldestRunning,
  takeBarrier,
  type HistoryEventRow,
  type LastIds,
} from '../../../store/events.js';
import { delay } from '../../../lifecycle.js';
import { KubeError } from '../status.js';
import { afterPoll, lowWaterAt, withBound, type LowWater } from './low-water.js';

export type Position = LastIds;

/** The resourceVersion of a position. */
export function formatPosition(at: Position): string {
  return `${at.history}.${at.cluster}`;
}

/** A position from a resourceVersion, or null when it is not one ("H.C"). */
export function parsePosition(text: string): Position | null {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(text);
  return match ? { history: Number(match[1]), cluster: Number(match[2]) } : null;
}

const SETTLE_POLL_MS = 10;

/**
 * The position a list is read at: the last ids taken, once every transaction that took one has
 * ended (low-water.ts, steps 1 to 3, waited for at once). Usually a few milliseconds; a
 * transaction open longer than `waitMs` makes it a 504 Timeout, which clients retry.
 */
export async function settledCut(db: Db, waitMs: number): Promise<Position> {
  const last = await lastEventIds(db);
  const barrier = await takeBarrier(db);
  const deadline = Date.now() + waitMs;
  while ((await oldestRunning(db)) < barrier) {
    if (Date.now() >= deadline) {
      throw new KubeError(
        504,
        'Timeout',
        `events: a database transaction that began before this read is still open after ${waitMs} ms; try again`,
      );
    }
    await delay(SETTLE_POLL_MS);
  }
  return last;
}

export interface EventCursor {
  history: LowWater;
  cluster: LowWater;
}

export function cursorAt(at: Position): EventCursor {
  return { history: lowWaterAt(at.history), cluster: lowWaterAt(at.cluster) };
}

/** Where a watch may resume from and miss nothing (it may see again what it streamed above it). */
export function positionOf(cursor: EventCursor): Position {
  return { history: cursor.history.low, cluster: cursor.cluster.low };
}

/** How many ids above the low-water marks a cursor holds: what a transaction left open piles up. */
export function heldIds(cursor: EventCursor): number {
  return cursor.history.streamed.size + cursor.cluster.streamed.size;
}

/** One poll: the rows not streamed yet (up to `limit` of each table), and the cursor after them. */
export async function readOn(
  db: Db,
  cursor: EventCursor,
  limit: number,
): Promise<{ cursor: EventCursor; history: HistoryEventRow[]; cluster: ClusterEventRow[] }> {
  // Before the rows: a bound counts as reached only for a read that began after it was.
  const oldest = cursor.history.bound || cursor.cluster.bound ? await oldestRunning(db) : null;
  const [history, cluster] = await Promise.all([
    historyAfter(db, cursor.history.low, [...cursor.history.streamed], limit),
    clusterEventsAfter(db, cursor.cluster.low, [...cursor.cluster.streamed], limit),
  ]);
  const h = afterPoll(cursor.history, {
    oldestRunning: oldest,
    ids: history.map((r) => r.id),
    full: history.length === limit,
  });
  const c = afterPoll(cursor.cluster, {
    oldestRunning: oldest,
    ids: cluster.map((r) => r.id),
    full: cluster.length === limit,
  });
  let next: EventCursor = { history: h.state, cluster: c.state };
  if (!next.history.bound || !next.cluster.bound) {
    const last = await lastEventIds(db);
    const barrier = await takeBarrier(db); // after the ids: see low-water.ts
    next = {
      history: withBound(next.history, { lastId: last.history, barrier }),
      cluster: withBound(next.cluster, { lastId: last.cluster, barrier }),
    };
  }
  const fresh = { history: new Set(h.fresh), cluster: new Set(c.fresh) };
  return {
    cursor: next,
    history: history.filter((r) => fresh.history.has(r.id)),
    cluster: cluster.filter((r) => fresh.cluster.has(r.id)),
  };
}
