// The state file a detached simulated cluster leaves in FENCER_HOME (default ./.fencer), so
// that later commands (status, kill, freeze, down, and the resource commands' default server)
// can find its processes. The supervisor rewrites it whenever a process is (re)started.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface ProcessEntry {
  name: string;
  pid: number;
}

export interface ClusterState {
  runtime: 'process' | 'docker';
  databaseUrl: string;
  supervisorPid: number;
  startedAt: string;
  replicas: Array<ProcessEntry & { url: string }>;
  nodes: Array<ProcessEntry & { logFile: string; proxyPid?: number }>;
}

export function fencerHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.FENCER_HOME ?? '.fencer');
}

export function statePath(home = fencerHome()): string {
  return join(home, 'cluster.json');
}

export function readClusterState(home = fencerHome()): ClusterState | null {
  const path = statePath(home);
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8')) as ClusterState;
}

export function writeClusterState(state: ClusterState, home = fencerHome()): void {
  mkdirSync(home, { recursive: true });
  const path = statePath(home);
  writeFileSync(`${path}.tmp`, JSON.stringify(state, null, 2));
  renameSync(`${path}.tmp`, path); // readers never see half a file
}
