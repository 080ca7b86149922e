import type { Command } from 'commander';

export function registerProxyCommand(program: Command): void {
  void program;
}
