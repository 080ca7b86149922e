// A transaction whose session ends before COMMIT (idle_in_transaction_session_timeout after the
// replica stalled, a terminated backend) was rolled back whole by the server: transaction()
// runs it again on another connection, once, and the caller sees one commit. Before, the caller
// got "Client has encountered a connection error and is not queryable" as a 500.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { transaction } from '../../src/store/db.js';
import { SessionLostError } from '../../src/errors/session-lost-error.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase('transaction');
  await t.db.query('CREATE TABLE tx_probe (attempt int NOT NULL)');
  // A row here ends its session as its transaction commits: the answer to COMMIT is lost.
  await t.db.query('CREATE TABLE tx_commit_probe (n int NOT NULL)');
  await t.db.query(`CREATE FUNCTION tx_die() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(1); RETURN NULL; END $$`);
  await t.db.query(`CREATE CONSTRAINT TRIGGER tx_die AFTER INSERT ON tx_commit_probe
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tx_die()`);
});
afterAll(() => t?.close());

it('runs a transaction again when its session ended before COMMIT, and commits it once', async () => {
  let attempts = 0;
  await transaction(t.db, async (tx) => {
    attempts++;
    await tx.query('INSERT INTO tx_probe (attempt) VALUES ($1)', [attempts]);
    if (attempts === 1) {
      const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await t.db.query('SELECT pg_terminate_backend($1)', [pid]);
      await tx.query('SELECT 1'); // the session is gone: this fails
    }
  });
  expect(attempts).toBe(2);
  const rows = (await t.db.query<{ attempt: number }>('SELECT attempt FROM tx_probe')).rows;
  expect(rows).toEqual([{ attempt: 2 }]); // the first attempt's insert was rolled back with its session
});

it('gives up with SessionLostError when every attempt loses its session', async () => {
  const failing = transaction(
    t.db,
    async (tx) => {
      const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await t.db.query('SELECT pg_terminate_backend($1)', [pid]);
      await tx.query('SELECT 1');
    },
    2,
  );
  await expect(failing).rejects.toBeInstanceOf(SessionLostError);
});

it('does not run a transaction again when its session ended during COMMIT: whether it committed is unknown', async () => {
  let attempts = 0;
  const failing = transaction(t.db, async (tx) => {
    attempts++;
    await tx.query('INSERT INTO tx_commit_probe (n) VALUES (1)');
  });
  await expect(failing).rejects.toThrow();
  await expect(failing).rejects.not.toBeInstanceOf(SessionLostError);
  expect(attempts).toBe(1);
});

it('runs it again when the guard is broken (commit-ambiguity): the test above can fail', async () => {
  const before = process.env.FENCER_BREAK_GUARDS;
  process.env.FENCER_BREAK_GUARDS = 'commit-ambiguity';
  try {
    let attempts = 0;
    const failing = transaction(
      t.db,
      async (tx) => {
        attempts++;
        await tx.query('INSERT INTO tx_commit_probe (n) VALUES (1)');
      },
      3,
    );
    await expect(failing).rejects.toBeInstanceOf(SessionLostError);
    expect(attempts).toBe(3);
  } finally {
    if (before === undefined) delete process.env.FENCER_BREAK_GUARDS;
    else process.env.FENCER_BREAK_GUARDS = before;
  }
});
