// `fencer agent`: runs one worker agent (a simulated node) in this process until signalled.
import { InvalidArgumentError, type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { Agent } from '../agent/agent.js';
import { timingsFromEnv } from '../config.js';
import { DEFAULT_MAX_JOBS } from '../domain/resources.js';
import { caFromEnv, readCa } from '../net/tls.js';
import { parseJoinToken } from '../domain/node-identity.js';

interface AgentFlags {
  name: string[];
  cpu: string;
  memory: string;
  maxJobs: number;
  label?: Record<string, string>;
  labels?: Record<string, string>;
  image?: string[];
  replicas: string[];
  logFile: string;
  joinToken?: string;
  joinTokenFile?: string;
  ca?: string;
  metricsPort?: number;
  metricsHost: string;
}

export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('run a worker agent: a simulated node that holds CPU and memory for each job it is given')
    .requiredOption(
      '--name <names>',
      'node name (a DNS-1123 subdomain, as Kubernetes names nodes); several, comma-separated, run that many nodes in this one process (benchmarks)',
      parseNames,
    )
    .requiredOption('--cpu <quantity>', 'CPU capacity, e.g. 4 or 3500m')
    .requiredOption('--memory <quantity>', 'memory capacity, e.g. 8Gi')
    .option(
      '--max-jobs <n>',
      "the most runs this node holds at once, whatever their size (as kubelet's max pods)",
      parseMaxJobs,
      DEFAULT_MAX_JOBS,
    )
    .option('--label <k=v>', 'a node label, repeatable (os, arch and pool=default are set unless given)', collectLabel)
    .option('--labels <k=v,...>', 'node labels, comma-separated', collectLabels)
    .option(
      '--image <name>',
      'an image this node holds, repeatable (a job with spec.image runs only where it is)',
      collectImage,
    )
    .requiredOption('--replicas <urls>', 'control-plane replica base URLs, comma-separated', parseReplicas)
    .requiredOption(
      '--log-file <path>',
      'where the run log (NDJSON, see docs/agent-log.md) is appended; {name} is the node name (required with several)',
    )
    .option(
      '--join-token-file <path>',
      'a file holding the join token (id.secret) the node registers with; {name} is the node name (default: $FENCER_JOIN_TOKEN)',
    )
    .option(
      '--ca <file>',
      "the CA (PEM) the replicas' certificate is verified against, for https replicas (default: $FENCER_CA, else the system's CAs)",
    )
    .option('--join-token <token>', 'the join token itself (visible to ps: prefer the file or $FENCER_JOIN_TOKEN)')
    .option('--metrics-port <port>', 'serve /metrics (Prometheus) and /healthz on this port (default: none)', parsePort)
    .option('--metrics-host <host>', 'address the metrics port listens on', '127.0.0.1')
    .action(async (flags: AgentFlags) => {
      await runAgent(flags);
    });
}

/**
 * The join token a node registers with (docs/security.md, Node identity): --join-token, else
 * --join-token-file, else FENCER_JOIN_TOKEN, else none (a replica without authentication).
 */
function joinTokenOf(flags: AgentFlags, name: string): string | undefined {
  let token = flags.joinToken;
  if (token === undefined && flags.joinTokenFile !== undefined) {
    const file = flags.joinTokenFile.replaceAll('{name}', name);
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new InvalidArgumentError(`--join-token-file: cannot read ${file}: ${(err as Error).message}`);
    }
  }
  token ??= process.env.FENCER_JOIN_TOKEN || undefined;
  if (token !== undefined && parseJoinToken(token) === null)
    throw new InvalidArgumentError('the join token is not of the form id.secret (6 and 16 of [a-z0-9])');
  return token;
}

async function runAgent(flags: AgentFlags): Promise<void> {
  const labels = { os: process.platform, arch: process.arch, pool: 'default', ...flags.labels, ...flags.label };
  if (flags.name.length > 1 && !flags.logFile.includes('{name}')) {
    throw new InvalidArgumentError(
      '--log-file must contain {name} when --name lists several nodes: each node keeps its own run log',
    );
  }
  const ca = flags.ca ? readCa(flags.ca, '--ca') : caFromEnv();
  const root = pino({ level: process.env.FENCER_LOG_LEVEL ?? 'info' });
  const logger = flags.name.length === 1 ? root.child({ node: flags.name[0] }) : root;
  // Several nodes in one process share its runtime (V8, GC, event loop): on a small machine that
  // is what lets a benchmark run a hundred of them. Each is still its own agent, with its own
  // connections, heartbeats, watch stream, self-fence and run log.
  const agents = flags.name.map(
    (name) =>
      new Agent({
        name,
        cpu: flags.cpu,
        memory: flags.memory,
        maxJobs: flags.maxJobs,
        labels,
        images: flags.image ?? [],
        replicas: flags.replicas,
        logFile: flags.logFile.replaceAll('{name}', name),
        joinToken: joinTokenOf(flags, name),
        ca,
        timings: timingsFromEnv(),
        logger: root.child({ node: name }),
      }),
  );
  const agent = {
    start: () => Promise.all(agents.map((a) => a.start())),
    stop: () => Promise.all(agents.map((a) => a.stop())),
  };

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalled = true;
    logger.info({ signal }, 'stopping gracefully (signal again to exit at once)');
    agent.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'graceful stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  // A node runs its jobs whether or not it can be scraped: a port taken is a warning, not a crash loop.
  if (flags.metricsPort !== undefined) {
    await serveMetrics(flags.metricsHost, flags.metricsPort, logger).catch((err: Error) =>
      logger.warn({ err: err.message, port: flags.metricsPort }, 'cannot serve /metrics; running without'),
    );
  }
  await agent.start(); // then the agent's loops keep the process alive until a signal
}

/**
 * /metrics for Prometheus, /healthz for a liveness probe: answered by the event loop that runs
 * the node's timers and streams, so an answer says that loop is turning.
 */
async function serveMetrics(
  host: string,
  port: number,
  logger: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void },
): Promise<void> {
  const { createServer } = await import('node:http');
  const { agentRegistry } = await import('../agent/metrics.js');
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/metrics') {
      agentRegistry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': agentRegistry.contentType }).end(text),
        (err: Error) => res.writeHead(500).end(err.message),
      );
    } else if (req.method === 'GET' && req.url === '/healthz')
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  server.unref(); // the agent's own loops keep the process alive, and a signal ends it
  logger.info({ url: `http://${host}:${port}/metrics` }, 'serving metrics');
}

function parseMaxJobs(raw: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError(`"${raw}" is not a positive whole number of runs`);
  return n;
}

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError(`"${raw}" is not a TCP port`);
  return port;
}

function parseLabel(raw: string): [string, string] {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`"${raw}" is not a label (want key=value)`);
  return [raw.slice(0, eq).trim(), raw.slice(eq + 1).trim()];
}

function collectLabel(raw: string, previous: Record<string, string> = {}): Record<string, string> {
  const [key, value] = parseLabel(raw);
  return { ...previous, [key]: value };
}

function collectLabels(raw: string, previous: Record<string, string> = {}): Record<string, string> {
  return raw
    .split(',')
    .filter((part) => part.trim() !== '')
    .reduce((labels, part) => collectLabel(part, labels), previous);
}

function collectImage(raw: string, previous: string[] = []): string[] {
  if (raw.trim() === '') throw new InvalidArgumentError('an image name cannot be empty');
  return [...previous, raw.trim()];
}

function parseNames(raw: string): string[] {
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new InvalidArgumentError('at least one node name is needed');
  if (new Set(names).size !== names.length) throw new InvalidArgumentError(`"${raw}" names a node twice`);
  return names;
}

function parseReplicas(raw: string): string[] {
  const urls = raw
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  if (urls.length === 0) throw new InvalidArgumentError('at least one replica URL is needed');
  for (const url of urls) {
    try {
      new URL(url);
    } catch {
      throw new InvalidArgumentError(`"${url}" is not a URL`);
    }
  }
  return urls;
}
