import type { Command } from 'commander';

export function registerClusterCommands(program: Command): void {
  void program;
}
