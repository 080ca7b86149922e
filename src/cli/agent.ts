// `fencer agent`: runs one worker agent (a simulated node) in this process until signalled.
import { InvalidArgumentError, type Command } from 'commander';
import { pino } from 'pino';
import { Agent } from '../agent/agent.js';
import { timingsFromEnv } from '../config.js';

interface AgentFlags {
  name: string;
  cpu: string;
  memory: string;
  label?: Record<string, string>;
  labels?: Record<string, string>;
  replicas: string[];
  logFile: string;
}

export function registerAgentCommand(program: Command): void {
  program
    .command('agent')
    .description('run a worker agent: a simulated node that holds CPU and memory for each job it is given')
    .requiredOption('--name <name>', 'node name (a DNS-1123 label)')
    .requiredOption('--cpu <quantity>', 'CPU capacity, e.g. 4 or 3500m')
    .requiredOption('--memory <quantity>', 'memory capacity, e.g. 8Gi')
    .option('--label <k=v>', 'a node label, repeatable (os, arch and pool=default are set unless given)', collectLabel)
    .option('--labels <k=v,...>', 'node labels, comma-separated', collectLabels)
    .requiredOption('--replicas <urls>', 'control-plane replica base URLs, comma-separated', parseReplicas)
    .requiredOption('--log-file <path>', 'where the run log (NDJSON, see docs/agent-log.md) is appended')
    .action(async (flags: AgentFlags) => {
      await runAgent(flags);
    });
}

async function runAgent(flags: AgentFlags): Promise<void> {
  const labels = { os: process.platform, arch: process.arch, pool: 'default', ...flags.labels, ...flags.label };
  const logger = pino().child({ node: flags.name });
  const agent = new Agent({
    name: flags.name,
    cpu: flags.cpu,
    memory: flags.memory,
    labels,
    replicas: flags.replicas,
    logFile: flags.logFile,
    timings: timingsFromEnv(),
    logger,
  });

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

  await agent.start(); // then the agent's loops keep the process alive until a signal
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
  return raw.split(',').filter((part) => part.trim() !== '').reduce((labels, part) => collectLabel(part, labels), previous);
}

function parseReplicas(raw: string): string[] {
  const urls = raw.split(',').map((url) => url.trim()).filter((url) => url !== '');
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
