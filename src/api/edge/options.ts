// The edge's options (docs/security.md, "Limits"): who is let in by name, whom the history
// believes about someone else, and how much one caller may ask. Each has a default and an
// environment variable; `fencer replica` has flags for the names.

export interface EdgeOptions {
  /**
   * Host names the replicas are reached by besides their own advertised URLs' (a Service's or a
   * proxy's DNS name): FENCER_ALLOWED_HOSTS, comma-separated. IP addresses are always allowed.
   */
  allowedHosts: readonly string[];
  /**
   * Users or groups (a token's subject or one of its groups) trusted to say whom they act for
   * with X-Remote-User: an authenticating front proxy (FENCER_FRONT_PROXIES, comma-separated;
   * default none).
   */
  frontProxies: readonly string[];
  /**
   * Requests per second one caller (a token's subject) may make of one replica, refilled
   * continuously, and the burst it may make at once: past it, 429 with Retry-After
   * (FENCER_RATE_LIMIT_QPS, FENCER_RATE_LIMIT_BURST). Generous: benchmarks and the campaign
   * never meet it.
   */
  rate: Rate;
  /**
   * The same for a node's credential (group system:nodes), sized apart: an agent heartbeats once
   * a second and claims and reports in batches (FENCER_NODE_RATE_LIMIT_QPS, _BURST).
   */
  nodeRate: Rate;
  /**
   * Open watches and change feeds (Kubernetes `?watch`, the dashboard's /api/v1/changes) one
   * caller may hold on one replica (FENCER_MAX_WATCHES_PER_CALLER), and all callers together
   * (FENCER_MAX_WATCHES): past either, 429. Node watch streams are the node protocol's, one per
   * node, and not counted.
   */
  maxWatchesPerCaller: number;
  maxWatches: number;
}

export interface Rate {
  perSecond: number;
  burst: number;
}

export const DEFAULT_EDGE: EdgeOptions = {
  allowedHosts: [],
  frontProxies: [],
  rate: { perSecond: 5_000, burst: 10_000 },
  nodeRate: { perSecond: 1_000, burst: 2_000 },
  maxWatchesPerCaller: 100,
  maxWatches: 2_000,
};

export function edgeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): EdgeOptions {
  const number = (name: string, fallback: number) => positive(env, name, fallback);
  return {
    allowedHosts: listOf(env.FENCER_ALLOWED_HOSTS),
    frontProxies: listOf(env.FENCER_FRONT_PROXIES),
    rate: {
      perSecond: number('FENCER_RATE_LIMIT_QPS', DEFAULT_EDGE.rate.perSecond),
      burst: number('FENCER_RATE_LIMIT_BURST', DEFAULT_EDGE.rate.burst),
    },
    nodeRate: {
      perSecond: number('FENCER_NODE_RATE_LIMIT_QPS', DEFAULT_EDGE.nodeRate.perSecond),
      burst: number('FENCER_NODE_RATE_LIMIT_BURST', DEFAULT_EDGE.nodeRate.burst),
    },
    maxWatchesPerCaller: number('FENCER_MAX_WATCHES_PER_CALLER', DEFAULT_EDGE.maxWatchesPerCaller),
    maxWatches: number('FENCER_MAX_WATCHES', DEFAULT_EDGE.maxWatches),
  };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}: "${text}" is not a positive number`);
  return value;
}

export function listOf(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
