#!/usr/bin/env node
// fencer: the kubectl-like command line, and the entry point of every fencer process
// (replica, agent, proxy) so one binary runs the whole system.
import { Command } from 'commander';
import { registerResourceCommands } from './resources.js';
import { registerClusterCommands } from './cluster.js';
import { registerReplicaCommand } from './replica.js';
import { registerAgentCommand } from './agent.js';
import { registerProxyCommand } from './proxy.js';
import { registerBenchCommands } from './bench.js';
import { registerChaosCommands } from './chaos.js';

// `fencer get jobs | head` closes our stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command('fencer')
  .description('a fenced, level-triggered cluster job scheduler on PostgreSQL')
  .showHelpAfterError();

registerResourceCommands(program);
registerClusterCommands(program);
registerReplicaCommand(program);
registerAgentCommand(program);
registerProxyCommand(program);
registerBenchCommands(program);
registerChaosCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
