// How much the cluster's processes were held up during a benchmark, from their /metrics: the
// worst event-loop delay of any replica and any agent (prom-client's monitorEventLoopDelay since
// the last scrape, so read this first: nothing else scrapes during a run), how often nodes fenced
// themselves, and how long their heartbeats took. A replica whose loop stalls past the self-fence
// window sends its nodes neither keepalives nor heartbeat answers, and they must stop their jobs.

import { histogramOf, type LatencySummary } from './placement-metrics.js';
import { bearer } from '../net/api-client.js';
import { NODE_ROUTES } from '../agent-protocol/routes.js';

export interface Stalls {
  replicaLagMaxMs: number | null;
  replicaLagP99Ms: number | null;
  agentLagMaxMs: number | null;
  selfFences: number;
  /** Heartbeats, sending to the answer that counted (the agents' histograms added up). */
  heartbeats: LatencySummary;
  /**
   * Heartbeats as the replicas served them, from the request's first byte read to the answer
   * written (their http histograms added up): against `heartbeats`, what a replica held a node's
   * request itself, and what was the wait around it (the agent's loop, the sockets).
   */
  heartbeatsServed: LatencySummary;
  /** Nodes the leaders declared dead (every replica's counter, summed). */
  declaredDead: number;
}

/** `fetcher`: a fetch trusting the cluster's CA (Cluster.fetch). */
export async function readStalls(
  replicaUrls: string[],
  agentMetricsUrls: string[],
  fetcher: typeof fetch = fetch,
): Promise<Stalls> {
  const get = (url: string) =>
    fetcher(url, { headers: bearer() }).then(
      (r) => r.text(),
      () => '',
    );
  const replicas = await Promise.all(replicaUrls.map((url) => get(`${url}/metrics`)));
  const agents = await Promise.all(agentMetricsUrls.map(get));
  const ms = (values: number[]) => (values.length ? 1000 * Math.max(...values) : null);
  return {
    replicaLagMaxMs: ms(replicas.flatMap((t) => samples(t, 'fencer_process_nodejs_eventloop_lag_max_seconds'))),
    replicaLagP99Ms: ms(replicas.flatMap((t) => samples(t, 'fencer_process_nodejs_eventloop_lag_p99_seconds'))),
    agentLagMaxMs: ms(agents.flatMap((t) => samples(t, 'fencer_agent_process_nodejs_eventloop_lag_max_seconds'))),
    selfFences: agents.flatMap((t) => samples(t, 'fencer_agent_self_fences_total')).reduce((a, b) => a + b, 0),
    heartbeats: histogramOf(agents, 'fencer_agent_heartbeat_seconds'),
    heartbeatsServed: histogramOf(
      replicas.map((t) =>
        seriesOf(t, 'fencer_http_request_duration_seconds', `route="${NODE_ROUTES.heartbeat.route}"`),
      ),
      'fencer_http_request_duration_seconds',
    ),
    declaredDead: replicas.flatMap((t) => samples(t, 'fencer_nodes_declared_dead_total')).reduce((a, b) => a + b, 0),
  };
}

/**
 * The lines of `metric`'s series whose labels hold `label`, with every label but `le` taken off, so
 * that histogramOf reads one labelled series as it reads an unlabelled histogram.
 */
export function seriesOf(text: string, metric: string, label: string): string {
  const kept: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}_`) || !line.includes(label)) continue;
    const open = line.indexOf('{');
    const close = line.indexOf('}');
    if (open < 0 || close < open) continue;
    const le = /le="[^"]*"/.exec(line.slice(open, close))?.[0];
    kept.push(`${line.slice(0, open)}${le ? `{${le}}` : ''}${line.slice(close + 1)}`);
  }
  return kept.join('\n');
}

/** The values of every series of `metric` in a Prometheus text exposition. */
export function samples(text: string, metric: string): number[] {
  const values: number[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric) || (line[metric.length] !== ' ' && line[metric.length] !== '{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) values.push(value);
  }
  return values;
}
