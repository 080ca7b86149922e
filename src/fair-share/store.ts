// Queues and namespace quotas as users see them (any replica, no lease needed), and the
// admission of new jobs to them: a job's queue must exist (a namespace's `default` always
// does), and a namespace's ResourceQuota caps its jobs not yet placed.
import { cutPage, type PageRequest, type RowsPage } from '../domain/list-pages.js';
import { keyOf, pageParameters } from '../store/pages.js';
import type { Db, Tx } from '../store/db.js';
import { transaction } from '../store/db.js';
import { sql } from '../store/sql.js';
import type {
  JobRequest,
  QueueRequest,
  QueueSpec,
  ResourceQuotaRequest,
  ResourceQuotaSpec,
} from '../domain/resources.js';
import { DEFAULT_QUEUE } from '../domain/resources.js';
import { ValidationError } from '../errors/validation-error.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';

export interface QueueRow {
  uid: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  spec: QueueSpec;
  weight: number;
  concurrency_limit: number | null;
  cpu_limit_millis: number | null;
  memory_limit_bytes: number | null;
  strict_lanes: boolean;
  created_at: Date;
  updated_at: Date;
  resource_version: number;
  /** The id of the object's latest watch event (migration 0013): its resourceVersion. */
  watch_rv: number | null;
  annotations: Record<string, string>;
  running: number;
  allocated_cpu_millis: number;
  allocated_memory_bytes: number;
  pending: number;
  oldest_pending_name: string | null;
  oldest_pending_at: Date | null;
}

export interface QuotaRow {
  uid: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  spec: ResourceQuotaSpec;
  pending_jobs: number | null;
  cpu_limit_millis: number | null;
  memory_limit_bytes: number | null;
  rate_per_second: number | null;
  rate_burst: number | null;
  created_at: Date;
  updated_at: Date;
  resource_version: number;
  /** The id of the object's latest watch event (migration 0013): its resourceVersion. */
  watch_rv: number | null;
  annotations: Record<string, string>;
  pending: number;
  allocated_cpu_millis: number;
  allocated_memory_bytes: number;
  oldest_pending_name: string | null;
  oldest_pending_at: Date | null;
}

export interface NamespaceUsage {
  pending: number;
  running: number;
  allocated_cpu_millis: number;
  allocated_memory_bytes: number;
  oldest_pending_name: string | null;
  oldest_pending_at: Date | null;
}

/** When no placement rate says how fast the backlog drains, a refused submit is told to wait this long. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;

/**
 * Before jobs are inserted (same transaction): each namespace gets its `default` queue, every
 * other queue named must exist, and no namespace goes past its quota's pending jobs. The quota
 * rows are locked first and the count read after, so two submits count one after the other.
 */
export async function admitJobs(tx: Tx, jobs: readonly JobRequest[]): Promise<void> {
  if (jobs.length === 0) return;
  const namespaces = [...new Set(jobs.map((j) => j.namespace))].sort();
  const capped = (
    await tx.query<{ namespace: string; name: string; pending_jobs: number; rate_per_second: number | null }>(
      sql('fair-share/admit_lock'),
      [namespaces],
    )
  ).rows;
  const queued = jobs.filter((j) => j.queue !== DEFAULT_QUEUE);
  if (queued.length > 0) {
    const missing = (
      await tx.query<{ namespace: string; name: string }>(sql('fair-share/queue_missing'), [
        queued.map((j) => j.namespace),
        queued.map((j) => j.queue),
      ])
    ).rows;
    if (missing.length > 0) {
      throw new ValidationError(
        missing.map((m) => ({
          path: 'spec.queue',
          message: `queue "${m.name}" does not exist in namespace "${m.namespace}" (create it with kind: Queue)`,
        })),
      );
    }
  }
  if (capped.length === 0) return;
  const counts = new Map(
    (
      await tx.query<{ namespace: string; pending: number }>(sql('fair-share/quota_pending_count'), [
        capped.map((c) => c.namespace),
      ])
    ).rows.map((r) => [r.namespace, r.pending]),
  );
  // A job sent again (same name, already stored) adds nothing to wait.
  const named = jobs.filter((j) => j.name !== '');
  const stored = new Set(
    (
      await tx.query<{ namespace: string; name: string }>(sql('jobs/get_many'), [
        named.map((j) => j.namespace),
        named.map((j) => j.name),
      ])
    ).rows.map((r) => `${r.namespace}/${r.name}`),
  );
  for (const quota of capped) {
    const adding = jobs.filter(
      (j) => j.namespace === quota.namespace && !stored.has(`${j.namespace}/${j.name}`),
    ).length;
    if (adding === 0) continue;
    const pending = counts.get(quota.namespace) ?? 0;
    if (pending + adding <= quota.pending_jobs) continue;
    const over = pending + adding - quota.pending_jobs;
    const retryAfter = quota.rate_per_second
      ? Math.max(1, Math.ceil(over / quota.rate_per_second))
      : DEFAULT_RETRY_AFTER_SECONDS;
    throw new QuotaExceededError(
      `namespace ${quota.namespace}: ResourceQuota ${quota.name} allows ${quota.pending_jobs} jobs waiting to be placed; ` +
        `${pending} wait and this adds ${adding}. Nothing was stored; try again later`,
      retryAfter,
    );
  }
}

export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

/**
 * Creates or changes a queue. With `expectedVersion` (an update that names the resource version it
 * was read at), nothing is written if the queue is not at that version: 'stale'.
 */
export async function applyQueue(
  db: Db,
  q: QueueRequest,
  expectedVersion: number | null = null,
): Promise<{ outcome: ApplyOutcome | 'stale'; queue: QueueRow }> {
  return transaction(db, async (tx) => {
    if (expectedVersion !== null) {
      const current = (await tx.query<{ watch_rv: number }>(sql('fair-share/queue_version'), [q.namespace, q.name]))
        .rows[0];
      if (current?.watch_rv !== expectedVersion)
        return {
          outcome: 'stale' as const,
          queue: (
            await tx.query<QueueRow>(sql('fair-share/queue_list'), [q.namespace, q.name, ...pageParameters(null)])
          ).rows[0]!,
        };
    }
    const written = (
      await tx.query<{ created: boolean }>(sql('fair-share/queue_upsert'), [
        q.namespace,
        q.name,
        JSON.stringify(q.labels),
        JSON.stringify(q.spec),
        q.weight,
        q.concurrencyLimit,
        q.cpuLimitMillis,
        q.memoryLimitBytes,
        q.strictLanes,
        JSON.stringify(q.annotations ?? {}),
      ])
    ).rows[0];
    const queue = (
      await tx.query<QueueRow>(sql('fair-share/queue_list'), [q.namespace, q.name, ...pageParameters(null)])
    ).rows[0]!;
    return { outcome: written === undefined ? 'unchanged' : written.created ? 'created' : 'configured', queue };
  });
}

export async function listQueues(db: Db, namespace: string | null): Promise<QueueRow[]> {
  return (await db.query<QueueRow>(sql('fair-share/queue_list'), [namespace, null, ...pageParameters(null)])).rows;
}

/** A page of listQueues' list. */
export async function listQueuePage(db: Db, namespace: string | null, page: PageRequest): Promise<RowsPage<QueueRow>> {
  const rows = (await db.query<QueueRow>(sql('fair-share/queue_list'), [namespace, null, ...pageParameters(page)]))
    .rows;
  return cutPage(rows, page.limit, keyOf);
}

export async function getQueue(db: Db, namespace: string, name: string): Promise<QueueRow | undefined> {
  return (await db.query<QueueRow>(sql('fair-share/queue_list'), [namespace, name, ...pageParameters(null)])).rows[0];
}

export type DeleteResult = { outcome: 'deleted' } | { outcome: 'not-found' } | { outcome: 'not-allowed'; why: string };

/** Deletes a queue none of whose jobs is still to finish; `default` always exists. */
export async function deleteQueue(db: Db, namespace: string, name: string): Promise<DeleteResult> {
  if (name === DEFAULT_QUEUE)
    return {
      outcome: 'not-allowed',
      why: 'the queue "default" always exists (apply it to change its weight or limits)',
    };
  const row = (
    await db.query<{ existed: boolean; deleted: number; unfinished: number }>(sql('fair-share/queue_delete'), [
      namespace,
      name,
    ])
  ).rows[0]!;
  if (!row.existed && row.deleted === 0) return { outcome: 'not-found' };
  if (row.deleted === 0)
    return {
      outcome: 'not-allowed',
      why: `${row.unfinished} of its jobs have not finished (cancel or delete them first)`,
    };
  return { outcome: 'deleted' };
}

/** Creates or changes a namespace's quota; `expectedVersion` as for applyQueue. */
export async function applyQuota(
  db: Db,
  r: ResourceQuotaRequest,
  expectedVersion: number | null = null,
): Promise<{ outcome: ApplyOutcome | 'conflict' | 'stale'; quota: QuotaRow }> {
  return transaction(db, async (tx) => {
    await tx.query(sql('fair-share/quota_lock'), [r.namespace]);
    if (expectedVersion !== null) {
      const current = (
        await tx.query<{ name: string; watch_rv: number }>(sql('fair-share/quota_version'), [r.namespace])
      ).rows[0];
      if (current?.name !== r.name || current.watch_rv !== expectedVersion) {
        return {
          outcome: 'stale' as const,
          quota: (await tx.query<QuotaRow>(sql('fair-share/quota_list'), [r.namespace, ...pageParameters(null)]))
            .rows[0]!,
        };
      }
    }
    const written = (
      await tx.query<{ created: boolean }>(sql('fair-share/quota_upsert'), [
        r.namespace,
        r.name,
        JSON.stringify(r.labels),
        JSON.stringify(r.spec),
        r.pendingJobs,
        r.cpuLimitMillis,
        r.memoryLimitBytes,
        r.ratePerSecond,
        r.rateBurst,
        JSON.stringify(r.annotations ?? {}),
      ])
    ).rows[0];
    const quota = (await tx.query<QuotaRow>(sql('fair-share/quota_list'), [r.namespace, ...pageParameters(null)]))
      .rows[0]!;
    if (written) return { outcome: written.created ? 'created' : 'configured', quota };
    return { outcome: quota.name === r.name ? 'unchanged' : 'conflict', quota };
  });
}

export async function listQuotas(db: Db, namespace: string | null): Promise<QuotaRow[]> {
  return (await db.query<QuotaRow>(sql('fair-share/quota_list'), [namespace, ...pageParameters(null)])).rows;
}

/** A page of listQuotas' list. */
export async function listQuotaPage(db: Db, namespace: string | null, page: PageRequest): Promise<RowsPage<QuotaRow>> {
  const rows = (await db.query<QuotaRow>(sql('fair-share/quota_list'), [namespace, ...pageParameters(page)])).rows;
  return cutPage(rows, page.limit, keyOf);
}

export async function deleteQuota(db: Db, namespace: string, name: string): Promise<boolean> {
  return ((await db.query(sql('fair-share/quota_delete'), [namespace, name])).rowCount ?? 0) > 0;
}

export async function namespaceUsage(db: Db, namespace: string): Promise<NamespaceUsage> {
  return (await db.query<NamespaceUsage>(sql('fair-share/namespace_usage'), [namespace])).rows[0]!;
}
