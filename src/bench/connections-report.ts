// The connections benchmark's report (src/bench/connections.ts): one column per setting.
import type { LatencySummary } from './placement-metrics.js';
import type { ConnectionSample, ConnectionsOptions, ConnectionsRun } from './connections.js';

const MIB = 2 ** 20;

const ms = (value: number | null) => (value === null ? '–' : `${Math.round(value)} ms`);
const latency = (summary: LatencySummary) =>
  summary.count === 0 ? '–' : `${ms(summary.p50Ms)} / ${ms(summary.p99Ms)} (${summary.count})`;

export function connectionsReport(
  runs: readonly ConnectionsRun[],
  opts: Omit<ConnectionsOptions, 'log' | 'signal'>,
  about: { command: string; machine: string; date: Date },
): string {
  const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
  const kinds = (sample: ConnectionSample) =>
    Object.entries(sample.byKind)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, n]) => `${n} ${kind}`)
      .join(', ');
  const row = (label: string, cell: (run: ConnectionsRun) => string) => `| ${label} | ${runs.map(cell).join(' | ')} |`;
  const stretch = (name: 'rest' | 'load', label: string) => [
    row(`${label}: server sessions`, (r) => String(r[name].sessions)),
    row(`${label}: by path and state`, (r) => kinds(r[name])),
    row(`${label}: their PSS / RSS`, (r) => `${mib(r[name].pssBytes)} / ${mib(r[name].rssBytes)}`),
    row(`${label}: PSS per session`, (r) => mib(r[name].pssBytes / Math.max(1, r[name].sessions))),
    row(`${label}: PgBouncer's PSS / RSS`, (r) =>
      r[name].bouncer ? `${mib(r[name].bouncer.pssBytes)} / ${mib(r[name].bouncer.rssBytes)}` : '–',
    ),
  ];
  return [
    `# Server connections at ${opts.nodes} nodes, ${about.date.toISOString().slice(0, 10)}`,
    '',
    `- command: \`${about.command}\``,
    `- machine: ${about.machine}`,
    `- date: ${about.date.toISOString()}`,
    `- cluster: ${opts.replicas} replicas, ${opts.nodes} nodes (${opts.nodesPerProcess} per agent process, no proxies, agents at nice ${opts.agentNice}), ${opts.heartbeatMs === 1000 ? 'default timings (heartbeat every 1 s)' : `nodes heartbeat every ${opts.heartbeatMs / 1000} s (the death rule and the watch's silence scaled with it)`}, embedded PostgreSQL; a fresh cluster per setting`,
    `- direct: every replica pool connects to PostgreSQL. pgbouncer: the API pool goes through PgBouncer in transaction mode (${opts.poolSize} server sessions per replica); the lease, LISTEN, the liveness and the decisions pools stay direct`,
    `- sampled every ${opts.sampleMs} ms from pg_stat_activity (client backends of fencer's database, the sampler's own left out) for ${opts.restSeconds} s at rest, then for ${opts.loadSeconds} s while ${opts.jobsPerSecond} jobs of 2 s (100m, 64Mi) were submitted each second; each stretch's row is its sample with the most sessions. PSS: each shared page (shared buffers) divided among the processes mapping it`,
    '',
    `| | ${runs.map((r) => r.setting).join(' | ')} |`,
    `|---|${runs.map(() => '---').join('|')}|`,
    ...stretch('rest', 'at rest'),
    ...stretch('load', 'under load'),
    row('jobs succeeded / submitted', (r) => `${r.succeeded} / ${r.submitted}`),
    row('nodes not Ready at the end', (r) => String(r.notReady)),
    row('nodes declared dead / fenced themselves: coming up', (r) => `${r.up.declaredDead} / ${r.up.selfFences}`),
    row(
      'nodes declared dead / fenced themselves: measured stretches',
      (r) => `${r.stalls.declaredDead - r.up.declaredDead} / ${r.stalls.selfFences - r.up.selfFences}`,
    ),
    row('heartbeats as agents saw them: p50 / p99', (r) => latency(r.stalls.heartbeats)),
    row('heartbeats as replicas served them: p50 / p99', (r) => latency(r.stalls.heartbeatsServed)),
    row(
      'worst event-loop delay coming up: replicas (p99 of the worst) / agents',
      (r) => `${ms(r.up.replicaLagMaxMs)} (${ms(r.up.replicaLagP99Ms)}) / ${ms(r.up.agentLagMaxMs)}`,
    ),
    row(
      'worst event-loop delay while measured: replicas (p99 of the worst) / agents',
      (r) => `${ms(r.stalls.replicaLagMaxMs)} (${ms(r.stalls.replicaLagP99Ms)}) / ${ms(r.stalls.agentLagMaxMs)}`,
    ),
    '',
    "- heartbeats as agents saw them: from the sending to the answer that recorded it, the agents' histograms added up; as replicas served them: from the request read to the answer written. The gap between the two is time outside the replicas' handlers: the agents' and replicas' event loops and sockets. Nodes start 100 at a time, each wave once the last is Ready (src/simulator/local-cluster.ts)",
    '',
  ].join('\n');
}
