// PgBouncer (Debian's `pgbouncer`) in transaction mode in front of the cluster's database, for the
// replicas' API and node traffic (`fencer cluster up --pgbouncer`; docs/connections.md).
//
// One pooler database per replica (`replica-1`, …) over the same server database: PgBouncer 1.18
// refuses the startup option fencer sets its session settings with (`-c fencer.replica=…`), so
// each pool's server sessions get them from its connect_query instead: the history triggers
// still name the replica that made a change, and a session idle inside a transaction still ends.
// The price is a pool per replica, not one shared by all.
import { waitListening } from '../net/listening.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort } from '../net/free-port.js';
import { delay } from '../lifecycle.js';
import { sql } from '../store/sql.js';
import { letOthersTraverse, postgresOwner } from './ha-postgres.js';

const BINARY = '/usr/sbin/pgbouncer';
const READY_TIMEOUT_MS = 30_000;

/** Why PgBouncer cannot run here, or null when it can. */
export function pgbouncerUnavailable(): string | null {
  return existsSync(BINARY) ? null : 'the Debian package pgbouncer is not installed (apt-get install pgbouncer)';
}

export interface PgBouncerOptions {
  /** Files go to <home>/pgbouncer (removed on stop), its log to <home>/logs/pgbouncer.log. */
  home: string;
  /** The server database, with its user and password. */
  databaseUrl: string;
  /** One pool each. */
  replicas: string[];
  /** Set on every server session, as the replicas set it on their direct ones. */
  idleInTxTimeoutMs?: number;
  /** Server sessions per replica's pool (default_pool_size). */
  poolSize: number;
}

export class PgBouncer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private port = 0;
  private stopping: Promise<void> | undefined;

  private constructor(private readonly options: PgBouncerOptions) {}

  static async start(options: PgBouncerOptions): Promise<PgBouncer> {
    const problem = pgbouncerUnavailable();
    if (problem) throw new Error(`--pgbouncer cannot run: ${problem}`);
    const bouncer = new PgBouncer(options);
    try {
      await bouncer.boot();
    } catch (err) {
      await bouncer.stop();
      throw err;
    }
    return bouncer;
  }

  get dir(): string {
    return join(this.options.home, 'pgbouncer');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** What the replica named connects its API pool to (its password included). */
  pooledUrl(replica: string): string {
    const url = new URL(this.options.databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    url.pathname = `/${replica}`;
    url.search = '';
    return url.toString();
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.child) {
        // SIGINT: PgBouncer's safe shutdown (waits for transactions in flight), then SIGKILL.
        this.child.kill('SIGINT');
        const stopWaiting = new AbortController();
        await Promise.race([this.exited, delay(10_000, stopWaiting.signal).catch(() => {})]);
        stopWaiting.abort();
        this.child.kill('SIGKILL');
        await this.exited;
      }
      rmSync(this.dir, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  private async boot(): Promise<void> {
    const server = new URL(this.options.databaseUrl);
    const user = decodeURIComponent(server.username);
    const password = decodeURIComponent(server.password);
    this.port = await freePort();
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const config = join(this.dir, 'pgbouncer.ini');
    const userlist = join(this.dir, 'userlist.txt');
    writeFileSync(config, this.config(server), { mode: 0o600 });
    // The clients' password, which it also logs in to the server with (SCRAM needs it in clear or
    // as the server's own secret); 0600, beside the home's auth/postgres.password.
    writeFileSync(userlist, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
    const owner = postgresOwner();
    if (owner) {
      letOthersTraverse(this.dir);
      for (const path of [this.dir, config, userlist]) chownSync(path, owner.uid, owner.gid);
    }
    const logFile = join(this.options.home, 'logs', 'pgbouncer.log');
    mkdirSync(dirname(logFile), { recursive: true });
    const log = openSync(logFile, 'a');
    let child: ChildProcess;
    try {
      // Its own process group: a Ctrl-C in the terminal reaches the supervisor only.
      child = spawn(BINARY, [config], {
        stdio: ['ignore', log, log],
        detached: true,
        ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      });
    } finally {
      closeSync(log);
    }
    child.on('error', () => {});
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await waitListening(
      this.port,
      'pgbouncer',
      () => child.exitCode === null && child.signalCode === null,
      READY_TIMEOUT_MS,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; see ${logFile}`);
    });
  }

  private config(server: URL): string {
    const database = decodeURIComponent(server.pathname.slice(1)) || 'postgres';
    // SET takes a double-quoted identifier as its value: no single quote inside connect_query's.
    const settings = (replica: string) =>
      sql('pgbouncer/connect_query')
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.startsWith('--'))
        .join(' ')
        .replace('{replica}', replica)
        .replace('{timeout}', String(this.options.idleInTxTimeoutMs ?? 0));
    const databases = this.options.replicas.map(
      (replica) =>
        `${replica} = host=${server.hostname} port=${server.port || 5432} dbname=${database} connect_query='${settings(replica)}'`,
    );
    return [
      '[databases]',
      ...databases,
      '',
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${this.port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${join(this.dir, 'userlist.txt')}`,
      // A server session is a client's for one transaction: nothing may outlive it (LISTEN, session
      // advisory locks, named prepared statements), which is why those paths stay direct.
      'pool_mode = transaction',
      `default_pool_size = ${this.options.poolSize}`,
      'max_client_conn = 2000',
      // The replicas' own pools keep their connections; a server session idle this long is closed.
      'server_idle_timeout = 60',
      '',
    ].join('\n');
  }
}

function quoted(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}
