import type { Command } from 'commander';

export function registerReplicaCommand(program: Command): void {
  void program;
}
