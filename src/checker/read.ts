// The checker's inputs: the history table and the queues' limits (one SELECT each, nothing else
// from the database) and the nodes' run logs (NDJSON files, docs/agent-log.md).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { readRunLog, type RunLogLine } from '../agent/run-log.js';
import type { CheckInput, HistoryRow, QueueLimit } from './check.js';
import type { CronCursor, CronOccurrenceRecord } from './cron-findings.js';
import { sql } from '../store/sql.js';

/** Anything that runs a query: a pg Client, Pool or PoolClient. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>>;
}

interface RawHistoryRow {
  id: number;
  at: number;
  entity: 'job' | 'assignment';
  job_uid: string;
  job: string;
  assignment: string | null;
  node: string | null;
  epoch: number | null;
  from_state: string | null;
  to_state: string;
  reason: string | null;
  replica: string | null;
  due_at: number | null;
  needs: string[] | null;
  queue: string | null;
}

/** The whole history table, in history order (at, id). `source`: a database URL or an open connection. */
export async function readHistory(source: string | Queryable): Promise<HistoryRow[]> {
  return toRows(await rowsOf<RawHistoryRow>(source, sql('checker/history')));
}

/** The rows of one query, on `source` or on a connection of its own to the database URL. */
async function rowsOf<R extends pg.QueryResultRow>(source: string | Queryable, text: string): Promise<R[]> {
  if (typeof source !== 'string') return (await source.query<R>(text)).rows;
  const client = new pg.Client({ connectionString: source, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

function toRows(raw: RawHistoryRow[]): HistoryRow[] {
  return raw.map((r) => ({
    id: r.id,
    at: r.at,
    entity: r.entity,
    jobUid: r.job_uid,
    job: r.job,
    assignment: r.assignment,
    node: r.node,
    epoch: r.epoch,
    fromState: r.from_state,
    toState: r.to_state,
    reason: r.reason,
    replica: r.replica,
    dueAt: r.due_at,
    needs: r.needs,
    queue: r.queue,
  }));
}

/** All the checker reads: the history and queue limits from `source`, the run logs under `logPaths` (see runLogFiles). */
export async function readCheckInput(source: string | Queryable, logPaths: string[]): Promise<CheckInput> {
  return {
    history: await readHistory(source),
    runs: readRunLogs(logPaths),
    queueLimits: await readQueueLimits(source),
    cronRecords: await readCronRecords(source),
    cronCursors: await readCronCursors(source),
  };
}

/** Every queue's hard limits and every namespace quota on CPU or memory, as the database has them now. */
export async function readQueueLimits(source: string | Queryable): Promise<QueueLimit[]> {
  type Raw = {
    queue: string;
    scope: 'queue' | 'namespace';
    concurrency_limit: number | null;
    cpu: number | null;
    memory: number | null;
  };
  const rows = await rowsOf<Raw>(source, sql('checker/queue_limits'));
  return rows.map((r) => ({
    queue: r.queue,
    scope: r.scope,
    concurrencyLimit: r.concurrency_limit,
    cpuMillis: r.cpu,
    memoryBytes: r.memory,
  }));
}

/** Each CronJob's cursor and the database's clock now. */
export async function readCronCursors(source: string | Queryable): Promise<CronCursor[]> {
  const rows = await rowsOf<{ cronjob: string; next_fire_at: number; checked_at: number }>(
    source,
    sql('checker/cron_cursors'),
  );
  return rows.map((r) => ({ cronJob: r.cronjob, nextFireAt: r.next_fire_at, checkedAt: r.checked_at }));
}

/** Every CronJob occurrence record. */
export async function readCronRecords(source: string | Queryable): Promise<CronOccurrenceRecord[]> {
  type Raw = {
    id: number;
    cronjob_uid: string;
    cronjob: string;
    version: number;
    schedule: string;
    time_zone: string;
    concurrency_policy: string;
    job_uid: string | null;
    scheduled_at: string;
    outcome: 'Fired' | 'Skipped';
    reason: string | null;
    job: string | null;
    at: string;
  };
  return (await rowsOf<Raw>(source, sql('checker/cron_occurrences'))).map((r) => ({
    id: r.id,
    cronJobUid: r.cronjob_uid,
    cronJob: r.cronjob,
    version: r.version,
    schedule: r.schedule,
    timeZone: r.time_zone,
    concurrencyPolicy: r.concurrency_policy,
    jobUid: r.job_uid,
    scheduledAt: Number(r.scheduled_at),
    outcome: r.outcome,
    reason: r.reason,
    job: r.job,
    at: Number(r.at),
  }));
}

/**
 * The run-log files named by `paths`: a file is taken whatever its name; a directory gives every
 * `*.ndjson` file under it, recursively, in name order. A path that does not exist is an error.
 */
export function runLogFiles(paths: string[]): string[] {
  return paths.flatMap((path) => (statSync(path).isDirectory() ? ndjsonUnder(path) : [path]));
}

/** Every line of the run logs named by `paths` (see runLogFiles), torn last lines skipped. */
export function readRunLogs(paths: string[]): RunLogLine[] {
  return runLogFiles(paths).flatMap((file) => readRunLog(file));
}
function ndjsonUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...ndjsonUnder(path));
    else if (entry.isFile() && entry.name.endsWith('.ndjson')) found.push(path);
  }
  return found;
}
