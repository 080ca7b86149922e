#!/usr/bin/env node
// fencer: the kubectl-like command line, and the entry point of every fencer process
// (replica, agent, proxy) so one binary runs the whole system.
import { Command } from 'commander';

type Register = (program: Command) => void;

// Every command, loaded on demand: a process loads only the module of the command it runs (all of
// them for help). Loading them all (the Docker client, embedded PostgreSQL, fastify, ...) cost each
// process about half a second of CPU, paid by every agent of a hundred-node cluster and by every
// `fencer get`.
const COMMANDS: Record<string, () => Promise<Register>> = {
  resources: async () => (await import('./resources.js')).registerResourceCommands,
  cluster: async () => (await import('./cluster.js')).registerClusterCommands,
  replica: async () => (await import('./replica.js')).registerReplicaCommand,
  agent: async () => (await import('./agent.js')).registerAgentCommand,
  proxy: async () => (await import('./proxy.js')).registerProxyCommand,
  bench: async () => (await import('./bench.js')).registerBenchCommands,
  chaos: async () => (await import('./chaos.js')).registerChaosCommands,
  token: async () => (await import('./token.js')).registerTokenCommands,
  auth: async () => (await import('./auth.js')).registerAuthCommands,
};
/** The module of each top-level command that is not named after its module. */
const MODULE_OF: Record<string, string> = {
  kubeconfig: 'resources',
  apply: 'resources',
  get: 'resources',
  top: 'resources',
  describe: 'resources',
  delete: 'resources',
  cancel: 'resources',
  replay: 'resources',
  retry: 'resources',
  logs: 'cluster',
};

// `fencer get jobs | head` closes our stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command('fencer')
  .description('a fenced, level-triggered cluster job scheduler on PostgreSQL')
  .showHelpAfterError();

const command = process.argv[2] ?? '';
const module = MODULE_OF[command] ?? command;
const wanted = module in COMMANDS ? [module] : Object.keys(COMMANDS);
for (const name of wanted) (await (COMMANDS[name] as () => Promise<Register>)())(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
