// Cluster events (migration 0017): leaders elected, nodes dead or registered, fenced transactions
// rejected. Triggers write the first two; a replica writes its own rejections.
import { transaction, type Db, type Tx } from './db.js';
import { sql } from './sql.js';

export interface ClusterEventRow {
  id: number;
  at: Date;
  type: 'Normal' | 'Warning';
  reason: string;
  object: string;
  epoch: number | null;
  replica: string | null;
  message: string;
}

/**
 * The transaction takes its id before the row's id, as a trigger's insert does after the change
 * that fires it: a watch of the events counts on every row id being taken by a transaction that
 * already has its own (src/api/kube/events/low-water.ts).
 */
export async function recordClusterEvent(db: Db, event: Omit<ClusterEventRow, 'id' | 'at'>): Promise<void> {
  await transaction(db, async (tx) => {
    await tx.query(sql('cluster_events/take_xid'));
    await tx.query(sql('cluster_events/insert'), [
      event.type,
      event.reason,
      event.object,
      event.epoch,
      event.replica,
      event.message,
    ]);
  });
}

/** The newest first. */
export async function listClusterEvents(db: Db, limit: number): Promise<ClusterEventRow[]> {
  return (await db.query<ClusterEventRow>(sql('cluster_events/list'), [limit])).rows;
}

/** How many events older than a day were forgotten (at most `limit`). */
export async function pruneClusterEvents(tx: Tx, limit: number): Promise<number> {
  return (await tx.query(sql('cluster_events/prune'), [limit])).rowCount ?? 0;
}
