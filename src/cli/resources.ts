import type { Command } from 'commander';

export function registerResourceCommands(program: Command): void {
  void program;
}
