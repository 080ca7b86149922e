// The connections benchmark's report (src/bench/connections.ts): one column per setting.
import type { ConnectionSample, ConnectionsOptions, ConnectionsRun } from './connections.js';

const MIB = 2 ** 20;

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
    `- cluster: ${opts.replicas} replicas, ${opts.nodes} nodes (${opts.nodesPerProcess} per agent process, no proxies, agents at nice 10), ${opts.heartbeatMs === 1000 ? 'default timings (heartbeat every 1 s)' : `nodes heartbeat every ${opts.heartbeatMs / 1000} s (the death rule and the watch's silence scaled with it)`}, embedded PostgreSQL; a fresh cluster per setting`,
    `- direct: every replica pool connects to PostgreSQL. pgbouncer: the API pool goes through PgBouncer in transaction mode (${opts.poolSize} server sessions per replica); the lease, LISTEN, the liveness and the decisions pools stay direct`,
    `- sampled every ${opts.sampleMs} ms from pg_stat_activity (client backends of fencer's database, the sampler's own left out) for ${opts.restSeconds} s at rest, then for ${opts.loadSeconds} s while ${opts.jobsPerSecond} jobs of 2 s (100m, 64Mi) were submitted each second; each stretch's row is its sample with the most sessions. PSS: each shared page (shared buffers) divided among the processes mapping it`,
    '',
    `| | ${runs.map((r) => r.setting).join(' | ')} |`,
    `|---|${runs.map(() => '---').join('|')}|`,
    ...stretch('rest', 'at rest'),
    ...stretch('load', 'under load'),
    row('jobs succeeded / submitted', (r) => `${r.succeeded} / ${r.submitted}`),
    row('nodes not Ready at the end', (r) => String(r.notReady)),
    '',
  ].join('\n');
}
