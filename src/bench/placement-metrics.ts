// Placement round timings read from the replicas' /metrics (prom-client summaries): the leader
// observed every round; a replica that never led has none.

export interface RoundTimings {
  count: number;
  meanMs: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Replicas that observed rounds (more than one: leadership moved during the run). */
  replicas: number;
}

export async function readPlacementTimings(replicaUrls: string[]): Promise<{ decide: RoundTimings; round: RoundTimings }> {
  const texts = await Promise.all(replicaUrls.map((url) => fetch(`${url}/metrics`).then((r) => r.text(), () => '')));
  return { decide: summaryOf(texts, 'fencer_placement_decide_seconds'), round: summaryOf(texts, 'fencer_placement_round_seconds') };
}

export function summaryOf(texts: string[], metric: string): RoundTimings {
  const parsed = texts.map((text) => parseSummary(text, metric)).filter((s) => s.count > 0);
  if (parsed.length === 0) return { count: 0, meanMs: null, p50Ms: null, p99Ms: null, replicas: 0 };
  // Quantiles cannot be merged: take the replica that saw the most rounds (the leader).
  const main = parsed.reduce((a, b) => (b.count > a.count ? b : a));
  const count = parsed.reduce((n, s) => n + s.count, 0);
  const sum = parsed.reduce((n, s) => n + s.sum, 0);
  return { count, meanMs: (sum / count) * 1000, p50Ms: main.p50 * 1000, p99Ms: main.p99 * 1000, replicas: parsed.length };
}

function parseSummary(text: string, metric: string): { count: number; sum: number; p50: number; p99: number } {
  const value = (pattern: string) => {
    const line = text.split('\n').find((l) => l.startsWith(pattern));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
  };
  const count = value(`${metric}_count `);
  return {
    count: Number.isFinite(count) ? count : 0,
    sum: value(`${metric}_sum `),
    p50: value(`${metric}{quantile="0.5"}`),
    p99: value(`${metric}{quantile="0.99"}`),
  };
}
