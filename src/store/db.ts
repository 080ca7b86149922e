// Connection pools. Every session says which replica it belongs to (fencer.replica), so the
// history triggers can record who made each change.
import pg from 'pg';
import { statementName } from './sql.js';
import { SessionLostError } from '../errors/session-lost-error.js';
import { isBroken } from '../testing/broken-guards.js';

/** A pool's own handle: what opens and closes connections and counts them. */
export type Pool = pg.Pool;
/**
 * What queries need of a pool: a statement, or a connection for a transaction. Narrower than
 * Pool so that a rehearsal (store/rehearsal.ts) can stand in for it.
 */
export type Db = Pick<pg.Pool, 'query' | 'connect'>;
export type Tx = pg.PoolClient;

// bigint (int8) columns hold millicores, bytes and epochs, all far below 2^53.
pg.types.setTypeParser(20, (value) => Number(value));

export interface PoolOptions {
  databaseUrl: string;
  replica: string;
  max?: number;
  /** Leader sessions end when idle inside a transaction longer than this. */
  idleInTxTimeoutMs?: number;
  /**
   * How long a query may wait for a connection (default 5 s). Serving pools wait about as long
   * as their callers do: work queued past that is for a caller that has gone, and doing it
   * anyway is how an overloaded replica stays overloaded.
   */
  waitMs?: number;
  /**
   * The URL is a pooler in transaction mode (PgBouncer; docs/connections.md): a server session is
   * ours for one transaction only, so nothing may live in it between transactions. Startup
   * options (`-c fencer.replica=…`) are refused by PgBouncer 1.18 and would be lost anyway: the
   * pooler sets them on its server sessions (its per-replica database's connect_query). Statements
   * go unnamed: a statement prepared on one server session is unknown to the next.
   */
  pooled?: boolean;
}

function sessionOptions(replica: string, idleInTxTimeoutMs?: number): string {
  const settings = [`-c fencer.replica=${replica}`];
  if (idleInTxTimeoutMs !== undefined) settings.push(`-c idle_in_transaction_session_timeout=${idleInTxTimeoutMs}`);
  return settings.join(' ');
}

/**
 * Every direct session of a replica shows as `fencer:<replica>` in pg_stat_activity (chaos finds
 * them); a pooler's server session as `fencer:<replica>:pooled` while a pooled client uses it
 * (PgBouncer sets a client's application_name on the server session it lends it).
 */
export function applicationName(replica: string, pooled = false): string {
  return pooled ? `fencer:${replica}:pooled` : `fencer:${replica}`;
}

export function createPool(opts: PoolOptions): Pool {
  const pool = new pg.Pool({
    connectionString: opts.databaseUrl,
    max: opts.max ?? 10,
    ...(opts.pooled ? {} : { options: sessionOptions(opts.replica, opts.idleInTxTimeoutMs) }),
    application_name: applicationName(opts.replica, opts.pooled),
    connectionTimeoutMillis: opts.waitMs ?? 5000,
    idleTimeoutMillis: 30000,
  });
  // A terminated backend (pg_terminate_backend, a restarted PostgreSQL) surfaces here for idle
  // clients; the pool drops them and the next query opens a new connection.
  pool.on('error', () => {});
  // Broken on purpose (src/testing/broken-guards.ts, pooled-prepared-statements): named through a pooler too.
  if (!opts.pooled || isBroken('pooled-prepared-statements')) pool.on('connect', prepareFileStatements);
  return pool;
}

/**
 * A .sql file's statement with parameters goes as a prepared statement named after its file, so
 * each connection parses and plans it once instead of at every call: a placement, claim or report
 * statement took about as long to plan as to run. Not through a pooler in transaction mode
 * (PoolOptions.pooled): Debian's PgBouncer 1.18 has no max_prepared_statements (1.21 has).
 */
function prepareFileStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (config: unknown, values?: unknown, callback?: unknown) => unknown;
  const prepared = (config: unknown, values?: unknown, callback?: unknown): unknown => {
    const name = typeof config === 'string' && Array.isArray(values) ? statementName(config) : undefined;
    return name === undefined ? query(config, values, callback) : query({ name, text: config, values }, callback);
  };
  client.query = prepared as typeof client.query;
}

export function createClient(opts: PoolOptions): pg.Client {
  const client = new pg.Client({
    connectionString: opts.databaseUrl,
    options: sessionOptions(opts.replica, opts.idleInTxTimeoutMs),
    application_name: applicationName(opts.replica),
    connectionTimeoutMillis: 5000,
  });
  return client;
}

// PostgreSQL errors worth retrying the whole transaction for.
const RETRYABLE = new Set(['40001', '40P01', '55P03']);

export function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && RETRYABLE.has((err as { code?: string }).code ?? '');
}

/**
 * One transaction on a session the caller keeps for itself (the lease's, the migrator's): BEGIN,
 * fn, then COMMIT, or ROLLBACK when fn throws. No retry: such a caller decides what failure means.
 */
export async function inTransaction<T>(session: pg.ClientBase, fn: () => Promise<T>): Promise<T> {
  await session.query('BEGIN');
  try {
    const result = await fn();
    await session.query('COMMIT');
    return result;
  } catch (err) {
    await session.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * Runs fn in a transaction, retrying on serialization failures and deadlocks, and on a session
 * that ended before COMMIT (e.g. idle_in_transaction_session_timeout after this process stalled):
 * nothing of it was written, so it runs again on another connection.
 * `begin` opens it: BEGIN, or a .sql file's text that starts with BEGIN and reads in the same
 * round trip (without parameters: the simple protocol carries several statements); fn gets the
 * rows of its last statement.
 */
export async function transaction<T>(
  db: Db,
  fn: (tx: Tx, opened: pg.QueryResultRow[]) => Promise<T>,
  attempts = 5,
  begin = 'BEGIN',
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const tx = await db.connect();
    // While checked out, a client's errors (its session ended under it, e.g. by
    // idle_in_transaction_session_timeout) reach us as a failed query; without a listener the
    // same error would also crash the process as an unhandled 'error' event.
    const swallow = () => {};
    tx.on('error', swallow);
    let broken = false;
    let committing = false;
    try {
      // Several statements answer with one result each (pg's typings know only one).
      const opened = (await tx.query(begin)) as pg.QueryResult | pg.QueryResult[];
      const result = await fn(tx, Array.isArray(opened) ? opened.at(-1)!.rows : opened.rows);
      committing = true;
      await tx.query('COMMIT');
      return result;
    } catch (thrown) {
      broken = await tx.query('ROLLBACK').then(
        () => false,
        () => true,
      );
      // Broken on purpose (src/testing/broken-guards.ts, commit-ambiguity): a lost COMMIT counts as not sent.
      const lost =
        broken && (!committing || isBroken('commit-ambiguity')) && thrown instanceof Error && !isRetryable(thrown);
      const err = lost ? new SessionLostError(thrown) : thrown;
      if (attempt >= attempts || !(lost || isRetryable(err))) throw err;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
    } finally {
      tx.off('error', swallow);
      tx.release(broken);
    }
  }
}
