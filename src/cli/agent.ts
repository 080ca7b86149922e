import type { Command } from 'commander';

export function registerAgentCommand(program: Command): void {
  void program;
}
