// Latencies read from the cluster's /metrics (prom-client histograms): the placement rounds of
// every replica that led, the agents' heartbeats. Their buckets add up, and p50 and p99 are read
// off the sum as Prometheus' histogram_quantile does (linear within a bucket: an estimate, within
// the bucket's width, src/metrics/buckets.ts).

import { bearer } from '../net/api-client.js';
export interface LatencySummary {
  count: number;
  meanMs: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Processes that observed any (for rounds, more than one replica: leadership moved during the run). */
  sources: number;
}

/** `get`: a fetch trusting the cluster's CA (Cluster.fetch). */
export async function readPlacementTimings(
  replicaUrls: string[],
  get: typeof fetch = fetch,
): Promise<{ decide: LatencySummary; round: LatencySummary }> {
  const texts = await Promise.all(
    replicaUrls.map((url) =>
      get(`${url}/metrics`, { headers: bearer() }).then(
        (r) => r.text(),
        () => '',
      ),
    ),
  );
  return {
    decide: histogramOf(texts, 'fencer_placement_decide_seconds'),
    round: histogramOf(texts, 'fencer_placement_round_seconds'),
  };
}

interface Histogram {
  count: number;
  sum: number;
  /** Cumulative counts by upper bound, ascending (the last is +Inf). */
  buckets: Array<[number, number]>;
}

export function histogramOf(texts: string[], metric: string): LatencySummary {
  const parsed = texts.map((text) => parseHistogram(text, metric)).filter((h) => h.count > 0);
  if (parsed.length === 0) return { count: 0, meanMs: null, p50Ms: null, p99Ms: null, sources: 0 };
  const bounds = parsed[0]!.buckets.map(([le]) => le);
  const total: Histogram = {
    count: parsed.reduce((n, h) => n + h.count, 0),
    sum: parsed.reduce((n, h) => n + h.sum, 0),
    buckets: bounds.map((le) => [le, parsed.reduce((n, h) => n + (h.buckets.find(([b]) => b === le)?.[1] ?? 0), 0)]),
  };
  return {
    count: total.count,
    meanMs: (total.sum / total.count) * 1000,
    p50Ms: quantile(total, 0.5) * 1000,
    p99Ms: quantile(total, 0.99) * 1000,
    sources: parsed.length,
  };
}

/** histogram_quantile: the bucket the rank falls in, linear inside it; the largest finite bound past the last. */
export function quantile(h: Histogram, q: number): number {
  const rank = q * h.count;
  let lower = 0;
  let below = 0;
  for (const [le, cumulative] of h.buckets) {
    if (cumulative >= rank) {
      if (!Number.isFinite(le)) return lower;
      return lower + (le - lower) * ((rank - below) / Math.max(1, cumulative - below));
    }
    lower = le;
    below = cumulative;
  }
  return lower;
}

function parseHistogram(text: string, metric: string): Histogram {
  const buckets: Array<[number, number]> = [];
  let count = 0;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${metric}_bucket{le="`)) {
      const le = line.slice(`${metric}_bucket{le="`.length, line.indexOf('"}'));
      buckets.push([le === '+Inf' ? Infinity : Number(le), Number(line.slice(line.lastIndexOf(' ') + 1))]);
    } else if (line.startsWith(`${metric}_count `)) count = Number(line.slice(line.lastIndexOf(' ') + 1));
    else if (line.startsWith(`${metric}_sum `)) sum = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return { count, sum, buckets };
}
