// How long a cancel takes to stop what runs: 3 replicas and 8 nodes; each round a workflow of
// long jobs fills the nodes, and once all of them run it is cancelled from a replica other than
// the leader. From the cancel's answer to each node's stop line (its own run log, same machine
// clock), over every round; then the checker over the history and the node logs.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { Cluster } from '../simulator/local-cluster.js';
import { DEFAULT_TIMINGS } from '../config.js';
import { eventually } from '../lifecycle.js';
import { ApiClient } from '../net/api-client.js';
import { check, verdictOf, type Verdict } from '../checker/check.js';
import { readCheckInput } from '../checker/read.js';
import type { Workflow } from '../domain/resources.js';

const WAIT = { timeoutMs: 60_000, intervalMs: 20 };
const REQUEST_TIMEOUT_MS = 10_000;

export interface CancelOptions {
  rounds: number;
  jobs: number;
  nodes: number;
  log: (line: string) => void;
}

export interface CancelResult {
  options: Omit<CancelOptions, 'log'>;
  /** ms from the cancel request to each run's stop line, all rounds */
  stopMs: number[];
  /** ms from the cancel request to the last stop of its round */
  lastStopMs: number[];
  verdict: Verdict;
}

export async function runCancelBench(opts: CancelOptions): Promise<CancelResult> {
  const home = mkdtempSync(join(tmpdir(), 'fencer-cancel-'));
  opts.log(`starting 3 replicas and ${opts.nodes} nodes (home ${home})`);
  const cluster = await Cluster.start({ replicas: 3, nodes: opts.nodes, home, timings: DEFAULT_TIMINGS });
  // Every client of this run (the API client, metrics reads) acts as the cluster's admin, over TLS.
  cluster.exportClientEnv();
  const nodes = Array.from({ length: opts.nodes }, (_, i) => `node-${i + 1}`);
  const stopMs: number[] = [];
  const lastStopMs: number[] = [];
  try {
    for (let round = 0; round < opts.rounds; round++) {
      const name = `cancel-${round}`;
      const manifest = {
        apiVersion: 'fencer.dev/v1',
        kind: 'Workflow',
        metadata: { name },
        spec: {
          jobs: Array.from({ length: opts.jobs }, (_, i) => ({
            name: `j${i}`,
            template: { resources: { cpu: '500m', memory: '256Mi' }, duration: '5m' },
          })),
        },
      };
      const client = cluster.client({ timeoutMs: REQUEST_TIMEOUT_MS });
      await client.request('POST', '/api/v1/workflows', YAML.stringify(manifest));
      await eventually(
        async () => {
          const w = await client.request<Workflow>('GET', `/api/v1/namespaces/default/workflows/${name}`);
          return w.status?.jobs.every((j) => j.phase === 'Running') ?? false;
        },
        { ...WAIT, what: `every job of ${name} Running` },
      );
      const status = await client.status();
      const standby = status.replicas.find((r) => r.name !== status.leader)!;
      const at = Date.now();
      await new ApiClient([standby.url], { timeoutMs: REQUEST_TIMEOUT_MS }).request(
        'POST',
        `/api/v1/namespaces/default/workflows/${name}/cancel`,
      );
      const prefix = `default/${name}-`;
      const stops = await eventually(
        () => {
          const lines = nodes
            .flatMap((n) => runLog(cluster.nodeLogFile(n)))
            .filter((l) => l.event === 'stop' && l.job.startsWith(prefix));
          return lines.length === opts.jobs ? lines : null;
        },
        { ...WAIT, what: `a stop line for each job of ${name}` },
      );
      const ms = stops.map((l) => l.wallMs - at);
      stopMs.push(...ms);
      lastStopMs.push(Math.max(...ms));
      opts.log(`round ${round + 1}: ${opts.jobs} runs stopped, last ${Math.max(...ms)} ms after the cancel`);
    }
    const verdict = verdictOf(check(await readCheckInput(cluster.databaseUrl, [join(home, 'nodes')])));
    return { options: { rounds: opts.rounds, jobs: opts.jobs, nodes: opts.nodes }, stopMs, lastStopMs, verdict };
  } finally {
    await cluster.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

function runLog(file: string): Array<{ event: string; job: string; wallMs: number }> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { event: string; job: string; wallMs: number }];
      } catch {
        return []; // a line being written
      }
    });
}
