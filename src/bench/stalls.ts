// How much the cluster's processes were held up during a benchmark, from their /metrics: the
// worst event-loop delay of any replica and any agent (prom-client's monitorEventLoopDelay since
// the last scrape, so read this first: nothing else scrapes during a run), how often nodes fenced
// themselves, and how long their heartbeats took. A replica whose loop stalls past the self-fence
// window sends its nodes neither keepalives nor heartbeat answers, and they must stop their jobs.

import { histogramOf, type LatencySummary } from './placement-metrics.js';
import { bearer } from '../net/api-client.js';

export interface Stalls {
  replicaLagMaxMs: number | null;
  replicaLagP99Ms: number | null;
  agentLagMaxMs: number | null;
  selfFences: number;
  /** Heartbeats, sending to the answer that counted (the agents' histograms added up). */
  heartbeats: LatencySummary;
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
  };
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
