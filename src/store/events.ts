// What the Kubernetes Events are read from (src/api/kube/events/): the history (one row per state
// change of a job or an assignment, migration 0001) and the cluster events (migration 0017),
// both append-only with ids from a sequence. Besides rows, the two facts a reader needs to know
// that no row below an id can still appear: the sequences' last ids and transaction ids
// (events/*.sql; low-water.ts says how they are used).
import type { Db } from './db.js';
import { sql } from './sql.js';
import type { ClusterEventRow } from './cluster-events.js';
import type { JobHistoryRow } from './jobs.js';

/** A history row with what names its job. */
export interface HistoryEventRow extends JobHistoryRow {
  id: number;
  job_uid: string;
  /** namespace/name of the job when the row was written ('?' when its job was already gone). */
  job: string;
}

/** The last id of each table's sequence, taken or not yet committed. */
export interface LastIds {
  history: number;
  cluster: number;
}

export async function lastEventIds(db: Db): Promise<LastIds> {
  return (await db.query<LastIds>(sql('events/last_ids'))).rows[0]!;
}

/** A transaction id taken after every id of a running transaction (xid8, as a bigint). */
export async function takeBarrier(db: Db): Promise<bigint> {
  return BigInt((await db.query<{ xid: string }>(sql('events/barrier'))).rows[0]!.xid);
}

/** The oldest running transaction id: every smaller one has ended. */
export async function oldestRunning(db: Db): Promise<bigint> {
  return BigInt((await db.query<{ xmin: string }>(sql('events/xmin'))).rows[0]!.xmin);
}

/** Whether a watch may not go on from `at`: rows after it are older than `windowSeconds`, or it is past every id. */
export async function resumeExpired(db: Db, at: LastIds, windowSeconds: number): Promise<boolean> {
  return (await db.query<{ expired: boolean }>(sql('events/resume_expired'), [at.history, at.cluster, windowSeconds]))
    .rows[0]!.expired;
}

export async function historyAfter(
  db: Db,
  low: number,
  streamed: readonly number[],
  limit: number,
): Promise<HistoryEventRow[]> {
  return (await db.query<HistoryEventRow>(sql('history/events_after'), [low, streamed, limit])).rows;
}

export async function clusterEventsAfter(
  db: Db,
  low: number,
  streamed: readonly number[],
  limit: number,
): Promise<ClusterEventRow[]> {
  return (await db.query<ClusterEventRow>(sql('cluster_events/after'), [low, streamed, limit])).rows;
}

/** A list's window: rows up to `cut`, among its newest `most` ids, of the last `windowSeconds`. */
export interface Window {
  cut: number;
  most: number;
  windowSeconds: number;
}

export async function recentHistory(db: Db, window: Window, namespace: string | null): Promise<HistoryEventRow[]> {
  return (
    await db.query<HistoryEventRow>(sql('history/events_recent'), [
      window.cut,
      window.most,
      window.windowSeconds,
      namespace,
    ])
  ).rows;
}

export async function recentClusterEvents(db: Db, window: Window): Promise<ClusterEventRow[]> {
  return (
    await db.query<ClusterEventRow>(sql('cluster_events/recent'), [window.cut, window.most, window.windowSeconds])
  ).rows;
}

/** One job's newest `limit` rows up to `cut`, oldest first. */
export async function historyOfJob(db: Db, uid: string, cut: number, limit: number): Promise<HistoryEventRow[]> {
  return (await db.query<HistoryEventRow>(sql('history/events_of_job'), [uid, cut, limit])).rows;
}

export async function historyEvent(db: Db, id: number): Promise<HistoryEventRow | undefined> {
  return (await db.query<HistoryEventRow>(sql('history/event'), [id])).rows[0];
}

export async function clusterEvent(db: Db, id: number): Promise<ClusterEventRow | undefined> {
  return (await db.query<ClusterEventRow>(sql('cluster_events/get'), [id])).rows[0];
}
