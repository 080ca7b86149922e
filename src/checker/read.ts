// The checker's inputs: the history table (one SELECT, nothing else from the database) and the
// nodes' run logs (NDJSON files, docs/agent-log.md).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { readRunLog, type RunLogLine } from '../agent/run-log.js';
import type { HistoryRow } from './check.js';

/** Anything that runs a query: a pg Client, Pool or PoolClient. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>>;
}

// Times as ms since the Unix epoch with the microseconds in the fraction (a JS Date would drop
// them, and rows of one millisecond must keep the database's order); bigints as float8, so the
// result does not depend on a global pg type parser.
const HISTORY_SQL = `
SELECT id::float8 AS id,
       (extract(epoch FROM at) * 1000)::float8 AS at,
       entity, job_uid::text AS job_uid, job, assignment::text AS assignment, node,
       epoch::float8 AS epoch, from_state, to_state, reason, replica,
       (extract(epoch FROM due_at) * 1000)::float8 AS due_at, needs
FROM history
ORDER BY history.at, history.id`;

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
}

/** The whole history table, in history order (at, id). `source`: a database URL or an open connection. */
export async function readHistory(source: string | Queryable): Promise<HistoryRow[]> {
  if (typeof source !== 'string') return toRows((await source.query<RawHistoryRow>(HISTORY_SQL)).rows);
  const client = new pg.Client({ connectionString: source, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return toRows((await client.query<RawHistoryRow>(HISTORY_SQL)).rows);
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
