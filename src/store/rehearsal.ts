// A dry run (dryRun=All): the write itself, in one transaction that is always rolled back. It is
// checked by exactly what checks a real write (constraints, triggers, row locks, queue and quota
// limits, the idempotency table) and answers with the rows the write produced, and it leaves
// nothing: no row, no history, no watch event, no idempotency record, and no NOTIFY (PostgreSQL
// sends notifications only at commit). Sequences are not transactional: a rehearsal may use up
// ids and resource versions, as an aborted write does.
//
// The write's code runs unchanged against a stand-in for the pool: a statement runs on the
// rehearsal's connection, and a transaction becomes a savepoint in it, so a refusal rolls back
// to where it began and the write's own retry still works.
import type pg from 'pg';
import type { Db, Tx } from './db.js';
import { sql } from './sql.js';

/** Runs `write` against a pool whose changes are all rolled back; returns what it returned. */
export async function rehearse<T>(db: Db, write: (db: Db) => Promise<T>): Promise<T> {
  const connection = await db.connect();
  const swallow = () => {};
  connection.on('error', swallow);
  let broken = false;
  try {
    await connection.query('BEGIN');
    await connection.query(sql('rehearsal/idle_timeout'));
    return await write(standIn(connection));
  } finally {
    broken = await connection.query('ROLLBACK').then(
      () => false,
      () => true,
    );
    connection.off('error', swallow);
    connection.release(broken);
  }
}

/** The pool a rehearsed write sees. Write paths run one transaction at a time; a second open one is a bug, said loudly. */
function standIn(connection: Tx): Db {
  let lent = false;
  let savepoints = 0;
  const connect = async (): Promise<Tx> => {
    if (lent) throw new Error('a rehearsed write opened a second transaction while one was open');
    lent = true;
    const savepoint = `rehearsal_${++savepoints}`;
    const translated: Record<string, string> = {
      BEGIN: `SAVEPOINT ${savepoint}`,
      COMMIT: `RELEASE SAVEPOINT ${savepoint}`,
      ROLLBACK: `ROLLBACK TO SAVEPOINT ${savepoint}`,
    };
    const query = (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? translated[args[0].trim().toUpperCase()] : undefined;
      return (connection.query as (...a: unknown[]) => unknown)(...(text ? [text] : args));
    };
    return new Proxy(connection, {
      get(target, property, receiver) {
        if (property === 'query') return query;
        if (property === 'release') return () => void (lent = false);
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  const query = (...args: unknown[]) => (connection.query as (...a: unknown[]) => unknown)(...args);
  return { query: query as pg.Pool['query'], connect: connect as pg.Pool['connect'] };
}
