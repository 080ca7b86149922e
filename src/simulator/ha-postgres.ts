// HA PostgreSQL on this machine, as users run it in production: a three-member etcd, three
// PostgreSQL 15 members under Patroni with synchronous replication, and HAProxy in front, sending
// every connection to whichever member Patroni's REST API says is the primary (`GET /primary`).
// Everything listens on loopback ports and keeps its files under <home>/ha; the logs go to
// <home>/logs. The packages are Debian's (`patroni`, `etcd-server`, `haproxy`, `postgresql`).
//
// Why HAProxy and not a multi-host URL with target_session_attrs=read-write: node-postgres
// (pg 8) takes one host per connection string and knows no target_session_attrs, and a libpq-style
// client would only pick a writable member when it connects; HAProxy also *closes* the sessions
// of a member whose check fails (`on-marked-down shutdown-sessions`), so a replica still connected
// to a demoted or cut-off primary loses that connection instead of waiting on it (docs/ha.md).
//
// Chaos acts on process ids kept in the cluster's state file (`HaState`), so `fencer cluster
// kill postgres-primary` from a shell hits the same processes a test would.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort } from '../net/free-port.js';
import { delay } from '../lifecycle.js';
import { createHaDatabase } from '../store/ha.js';
import { withoutPassword, type FailoverSettings, type HaMember, type HaState } from './state.js';

export type { FailoverSettings, HaMember, HaState };

export const FAILOVER_SETTINGS: FailoverSettings = { ttl: 10, loopWait: 1, retryTimeout: 3 };

export const HA_MEMBERS = ['pg-1', 'pg-2', 'pg-3'] as const;
const ETCD_MEMBERS = ['etcd-1', 'etcd-2', 'etcd-3'] as const;
const USER = 'postgres';
const BIN_DIR = '/usr/lib/postgresql/15/bin';
const READY_TIMEOUT_MS = 180_000;

/** Why the HA database cannot run here, or null when it can. */
export function haUnavailable(): string | null {
  const missing = [
    ['patroni', '/usr/bin/patroni'],
    ['etcd-server', '/usr/bin/etcd'],
    ['haproxy', '/usr/sbin/haproxy'],
    ['postgresql-15', join(BIN_DIR, 'postgres')],
  ].filter(([, path]) => !existsSync(path!));
  if (missing.length === 0) return null;
  return `the Debian packages ${missing.map(([name]) => name).join(', ')} are not installed (apt-get install patroni etcd-server haproxy postgresql-15)`;
}

interface Child {
  process: ChildProcess;
  exited: Promise<void>;
}

export interface HaPostgresOptions {
  /** Files go to <home>/ha (removed on stop), logs to <home>/logs. */
  home: string;
  /** Of the superuser fencer connects as, and of replication (the home's, src/simulator/credentials.ts). */
  password: string;
  settings?: FailoverSettings;
  log?: (message: string) => void;
  signal?: AbortSignal;
}

export class HaPostgres {
  private readonly children = new Map<string, Child>();
  private readonly members: HaMember[] = [];
  private readonly etcd: Array<{ name: string; pid: number }> = [];
  private haproxyPid = 0;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private stopping: Promise<void> | undefined;
  /** The fencer database through HAProxy. */
  url = '';
  readonly settings: FailoverSettings;

  private constructor(private readonly options: HaPostgresOptions) {
    this.settings = options.settings ?? FAILOVER_SETTINGS;
  }

  static async start(options: HaPostgresOptions): Promise<HaPostgres> {
    const problem = haUnavailable();
    if (problem) throw new Error(`--postgres ha cannot run: ${problem}`);
    const ha = new HaPostgres(options);
    try {
      await ha.boot();
    } catch (err) {
      await ha.stop();
      throw err;
    }
    return ha;
  }

  get dir(): string {
    return join(this.options.home, 'ha');
  }

  state(): HaState {
    return {
      url: withoutPassword(this.url),
      haproxyPid: this.haproxyPid,
      etcd: [...this.etcd],
      members: this.members.map((m) => ({ ...m })),
      settings: this.settings,
    };
  }

  /** A member's own fencer database, not through HAProxy (tests read a member directly). */
  memberUrl(name: string, database = 'fencer'): string {
    const member = this.members.find((m) => m.name === name);
    if (!member) throw new Error(`no HA member named ${name} (members: ${HA_MEMBERS.join(', ')})`);
    return `postgres://${USER}:${encodeURIComponent(this.options.password)}@127.0.0.1:${member.pgPort}/${database}`;
  }

  /** How many members Patroni says run (a killed or rejoining one does not), asked of any that answers. */
  async runningMembers(): Promise<number> {
    for (const member of this.members) {
      const members = await clusterMembers(member.restUrl).catch(() => null);
      if (members) return members.filter((m) => m.state === 'running' || m.state === 'streaming').length;
    }
    return 0;
  }

  /** The members Patroni names synchronous standbys now, asked of any member that answers. */
  async syncStandbys(): Promise<string[]> {
    for (const member of this.members) {
      const members = await clusterMembers(member.restUrl).catch(() => null);
      if (members) return members.filter((m) => m.role === 'sync_standby').map((m) => m.name);
    }
    return [];
  }

  /** Stops HAProxy, the Patroni members (each stops its PostgreSQL) and etcd; removes <home>/ha. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async boot(): Promise<void> {
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
    const owner = postgresOwner();
    if (owner) letOthersTraverse(this.dir);
    const port = () => freePort();

    const etcdPorts = await Promise.all(ETCD_MEMBERS.map(async () => ({ client: await port(), peer: await port() })));
    const initialCluster = ETCD_MEMBERS.map((name, i) => `${name}=http://127.0.0.1:${etcdPorts[i]!.peer}`).join(',');
    const token = `fencer-${process.pid}-${Date.now()}`;
    for (const [i, name] of ETCD_MEMBERS.entries()) {
      const { client, peer } = etcdPorts[i]!;
      const args = [
        '--name', name,
        '--data-dir', join(this.dir, name),
        '--listen-client-urls', `http://127.0.0.1:${client}`,
        '--advertise-client-urls', `http://127.0.0.1:${client}`,
        '--listen-peer-urls', `http://127.0.0.1:${peer}`,
        '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
        '--initial-cluster', initialCluster,
        '--initial-cluster-state', 'new',
        '--initial-cluster-token', token,
        // Patroni talks etcd's v2 API here (patroniConfig says why).
        '--enable-v2=true',
      ]; // prettier-ignore
      const pid = this.launch(name, '/usr/bin/etcd', args);
      this.etcd.push({ name, pid });
    }
    this.options.log?.('etcd answers');
    const etcdHosts = etcdPorts.map((p) => `127.0.0.1:${p.client}`);
    await this.waitUntil('etcd to answer', async () => {
      const answers = await Promise.all(etcdPorts.map((p) => httpOk(`http://127.0.0.1:${p.client}/health`)));
      return answers.every(Boolean);
    });

    for (const name of HA_MEMBERS) {
      const memberDir = join(this.dir, name);
      mkdirSync(memberDir, { mode: 0o700 });
      const member: HaMember = {
        name,
        patroniPid: 0,
        restUrl: `http://127.0.0.1:${await port()}`,
        pgPort: await port(),
        dataDir: join(memberDir, 'data'),
      };
      const config = join(memberDir, 'patroni.json');
      // YAML reads JSON: no YAML writer needed.
      writeFileSync(config, JSON.stringify(this.patroniConfig(member, etcdHosts), null, 2), { mode: 0o600 });
      if (owner) {
        chownSync(memberDir, owner.uid, owner.gid);
        chownSync(config, owner.uid, owner.gid);
      }
      this.members.push(member);
      member.patroniPid = this.launchMember(member);
    }

    const haproxyPort = await port();
    const haproxyConfig = join(this.dir, 'haproxy.cfg');
    writeFileSync(haproxyConfig, this.haproxyConfig(haproxyPort));
    this.haproxyPid = this.launch('haproxy', '/usr/sbin/haproxy', ['-db', '-f', haproxyConfig]);

    const base = `postgres://${USER}:${encodeURIComponent(this.options.password)}@127.0.0.1:${haproxyPort}`;
    this.url = `${base}/fencer`;
    // The primary is up and took the fencer database, and a synchronous standby follows it:
    // from here on an acknowledged commit is on two members.
    await this.waitUntil('a Patroni primary behind HAProxy', async () => {
      await createHaDatabase(`${base}/postgres`);
      return true;
    });
    this.options.log?.('a Patroni primary answers through HAProxy');
    await this.waitUntil('a synchronous standby and every member running', async () => {
      const members =
        (await clusterMembers(this.members[0]!.restUrl).catch(() => null)) ??
        (await clusterMembers(this.members[1]!.restUrl));
      return (
        members.length === HA_MEMBERS.length &&
        members.some((m) => m.role === 'sync_standby') &&
        members.every((m) => m.state === 'running' || m.state === 'streaming')
      );
    });
  }

  private patroniConfig(member: HaMember, etcdHosts: string[]): unknown {
    const rest = new URL(member.restUrl);
    return {
      scope: 'fencer',
      name: member.name,
      restapi: { listen: rest.host, connect_address: rest.host },
      // The v2 API, not etcd3: Debian's Patroni 3.0.2 keeps an etcd3 view in a watch cache that
      // goes stale when Patroni stalls past the ttl (a freeze, a partition). Woken, it then
      // overwrites the new leader's key and retries a compare-and-set of the sync key against
      // the stale revision forever, so no standby is ever synchronous again (fixed upstream in
      // 3.0.3 and 3.1.0). The v2 client reads the whole cluster on every loop.
      etcd: { hosts: etcdHosts },
      bootstrap: {
        dcs: {
          ttl: this.settings.ttl,
          loop_wait: this.settings.loopWait,
          retry_timeout: this.settings.retryTimeout,
          maximum_lag_on_failover: 1048576,
          // An acknowledged commit is on the primary and the synchronous standby, and Patroni
          // promotes only that standby: a failover loses nothing acknowledged.
          synchronous_mode: true,
          postgresql: {
            use_pg_rewind: true,
            use_slots: true,
            parameters: {
              max_connections: 400,
              // A killed process loses nothing the OS holds; these members share one disk anyway.
              fsync: 'off',
              wal_log_hints: 'on',
              unix_socket_directories: '',
            },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }],
      },
      postgresql: {
        listen: `127.0.0.1:${member.pgPort}`,
        connect_address: `127.0.0.1:${member.pgPort}`,
        data_dir: member.dataDir,
        bin_dir: BIN_DIR,
        pgpass: join(dirname(member.dataDir), 'pgpass'),
        // A member that cannot rewind after a failover starts again from a base backup.
        // Without a fast checkpoint a new standby's base backup waits for the next timed one.
        basebackup: [{ checkpoint: 'fast' }],
        remove_data_directory_on_rewind_failure: true,
        remove_data_directory_on_diverged_timelines: true,
        authentication: {
          superuser: { username: USER, password: this.options.password },
          replication: { username: 'replicator', password: this.options.password },
          rewind: { username: USER, password: this.options.password },
        },
        pg_hba: ['host replication replicator 127.0.0.1/32 scram-sha-256', 'host all all 127.0.0.1/32 scram-sha-256'],
        parameters: { unix_socket_directories: '' },
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
      log: { level: 'INFO' },
    };
  }

  /**
   * TCP to the member whose Patroni answers 200 on /primary. A member marked down has its
   * sessions closed (shutdown-sessions): a client still talking to a demoted or cut-off primary
   * loses the connection at once and reconnects through here to the new one.
   */
  private haproxyConfig(port: number): string {
    return [
      'global',
      '  maxconn 2000',
      'defaults',
      '  mode tcp',
      '  timeout connect 2s',
      // LISTEN connections and idle pools stay open for hours.
      '  timeout client 24h',
      '  timeout server 24h',
      '  timeout check 1s',
      'listen primary',
      `  bind 127.0.0.1:${port}`,
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      // rise: a member must say "primary" for 10 s before it gets a session. Patroni woken after a
      // freeze longer than the ttl may believe a stale view for several loops and answer 200 while
      // another member leads (measured with etcd3: about 7 s); a session sent there could commit
      // what the rewind then throws away (docs/ha.md, "A primary cut off").
      '  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 20 on-marked-down shutdown-sessions',
      ...this.members.map(
        (m) => `  server ${m.name} 127.0.0.1:${m.pgPort} maxconn 1000 check port ${new URL(m.restUrl).port}`,
      ),
      '',
    ].join('\n');
  }

  /** Starts (or starts again) a member's Patroni, which starts its PostgreSQL. */
  private launchMember(member: HaMember): number {
    const owner = postgresOwner();
    const pid = this.launch(member.name, '/usr/bin/patroni', [join(dirname(member.dataDir), 'patroni.json')], owner);
    member.patroniPid = pid;
    return pid;
  }

  private launch(name: string, command: string, args: string[], owner?: { uid: number; gid: number } | null): number {
    const logFile = join(this.options.home, 'logs', `${name}.log`);
    mkdirSync(dirname(logFile), { recursive: true });
    const log = openSync(logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        stdio: ['ignore', log, log],
        // Its own process group: a Ctrl-C in the terminal reaches the supervisor only.
        detached: true,
        ...(owner ? { uid: owner.uid, gid: owner.gid, env: { ...process.env, HOME: this.dir } } : {}),
      });
    } finally {
      closeSync(log);
    }
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    child.on('error', () => {});
    const pid = child.pid;
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        if (this.children.get(name)?.process === child) this.children.delete(name);
        resolve();
        this.onExit(name, pid, signal ?? `code ${code}`);
      }),
    );
    this.children.set(name, { process: child, exited });
    return pid;
  }

  /**
   * A member's Patroni that died (chaos) starts again, as its service manager would, once its
   * leader key must have expired: a primary back within the ttl keeps its key and no failover
   * happens, which is the fault we did not mean to inject.
   */
  private onExit(name: string, pid: number, how: string): void {
    if (this.stopping) return;
    this.options.log?.(`${name} (pid ${pid}) exited (${how})`);
    const member = this.members.find((m) => m.name === name);
    if (!member) return;
    const restartMs = (this.settings.ttl + 2 * this.settings.loopWait) * 1000;
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (this.stopping || this.children.has(name)) return;
      // The PostgreSQL of a killed Patroni may still run (it was not its child to kill).
      killPostmaster(member.dataDir);
      this.launchMember(member);
      this.options.log?.(`${name} restarted (pid ${member.patroniPid})`);
      this.onRestart?.();
    }, restartMs);
    this.restartTimers.add(timer);
  }

  /** Called after a member started again (the supervisor rewrites its state file). */
  onRestart: (() => void) | undefined;

  private async shutdown(): Promise<void> {
    for (const timer of this.restartTimers) clearTimeout(timer);
    const stop = async (names: string[]) => {
      await Promise.all(
        names.map(async (name) => {
          const child = this.children.get(name);
          if (!child) return;
          // A frozen process cannot act on SIGTERM.
          child.process.kill('SIGCONT');
          child.process.kill('SIGTERM');
          const stopWaiting = new AbortController();
          await Promise.race([child.exited, delay(30_000, stopWaiting.signal).catch(() => {})]);
          stopWaiting.abort();
          if (this.children.has(name)) {
            child.process.kill('SIGKILL');
            await child.exited;
          }
        }),
      );
    };
    await stop(['haproxy']);
    for (const member of this.members) resumeMember(member);
    await stop([...HA_MEMBERS]);
    for (const member of this.members) killPostmaster(member.dataDir);
    await stop([...ETCD_MEMBERS]);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let lastError = '';
    for (;;) {
      if (this.options.signal?.aborted) throw new Error(`aborted while waiting for ${what}`);
      const dead = ETCD_MEMBERS.find((name) => !this.children.has(name));
      if (dead)
        throw new Error(
          `${dead} exited while waiting for ${what}; see ${join(this.options.home, 'logs', `${dead}.log`)}`,
        );
      try {
        if (await check()) return;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
      }
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}${lastError ? ` (${lastError})` : ''}; see ${join(this.options.home, 'logs')}`,
        );
      await delay(250);
    }
  }
}

// ---- reading and disturbing a running HA database by its process ids ----------------------------

export interface PatroniMember {
  name: string;
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

/** Patroni's view of the cluster (GET /cluster on one member). */
export async function clusterMembers(restUrl: string): Promise<PatroniMember[]> {
  const res = await fetch(`${restUrl}/cluster`, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) throw new Error(`${restUrl}/cluster answered ${res.status}`);
  const body = (await res.json()) as { members?: PatroniMember[] };
  return body.members ?? [];
}

/** The member whose Patroni says it is the primary (GET /primary answers 200), or null. */
export async function currentPrimary(state: HaState): Promise<HaMember | null> {
  const answers = await Promise.all(state.members.map((m) => httpOk(`${m.restUrl}/primary`)));
  const index = answers.findIndex(Boolean);
  return index < 0 ? null : state.members[index]!;
}

/** The postmaster's pid from its data directory, or null when none runs. */
export function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return pid > 0 && alive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/**
 * A member's PostgreSQL processes: its postmaster and every backend it forked. Backends are
 * signalled too, since a frozen postmaster alone leaves its sessions answering.
 */
function postgresProcesses(dataDir: string): number[] {
  const postmaster = postmasterPid(dataDir);
  if (postmaster === null) return [];
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return [postmaster, ...children];
}

/** SIGKILL the member's Patroni, then its PostgreSQL: the machine died. Its supervisor restarts Patroni. */
export function killMember(member: HaMember): void {
  signal(member.patroniPid, 'SIGKILL');
  killPostmaster(member.dataDir);
}

/** SIGSTOP the member's Patroni and PostgreSQL: the machine hangs, its sockets stay open. */
export function freezeMember(member: HaMember): void {
  signal(member.patroniPid, 'SIGSTOP');
  for (const pid of postgresProcesses(member.dataDir)) signal(pid, 'SIGSTOP');
}

/** SIGCONT what freezeMember or partitionMember stopped. */
export function resumeMember(member: HaMember): void {
  for (const pid of postgresProcesses(member.dataDir)) signal(pid, 'SIGCONT');
  signal(member.patroniPid, 'SIGCONT');
}

/**
 * Cut the member off from etcd and HAProxy while its PostgreSQL keeps serving the sessions it
 * has: its Patroni stops (no leader key renewed, no REST answer), PostgreSQL does not. On one
 * machine without network namespaces this is the partition that matters: a primary that does
 * not know it lost, still accepting writes from whoever is still connected.
 */
export function partitionMember(member: HaMember): void {
  signal(member.patroniPid, 'SIGSTOP');
}

export function healMember(member: HaMember): void {
  signal(member.patroniPid, 'SIGCONT');
}

function killPostmaster(dataDir: string): void {
  for (const pid of postgresProcesses(dataDir)) signal(pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** PostgreSQL (and PgBouncer) refuse to run as root: as root, they run as the `postgres` user. */
export function postgresOwner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root, and there is no postgres user for PostgreSQL to run as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** The postgres user must reach <home>/ha: let others traverse (not read) the folders above it. */
export function letOthersTraverse(dir: string): void {
  for (let d = dir; ; d = dirname(d)) {
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001);
    if (dirname(d) === d) break;
  }
}
