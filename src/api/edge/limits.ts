// How much one caller may ask of one replica (docs/security.md, "Limits"): a token bucket of
// requests per subject, and a count of open watches and change feeds per subject and per
// replica. Both in memory, per replica: no database round trip, and a caller spread over three
// replicas gets three times the rate, which is what "per replica" budgets mean.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EdgeOptions, Rate } from './options.js';
import { EdgeRefusal } from './refusal.js';
import { NODES_GROUP } from '../../domain/rbac.js';
import { isBroken } from '../../testing/broken-guards.js';

/** Past this many callers, buckets that are full again (idle callers) are forgotten. */
const SWEEP_AT = 10_000;

/** Token buckets by caller: `take` answers 0 when a request may go, else the seconds to wait. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  take(caller: string, rate: Rate): number {
    const now = this.now();
    let bucket = this.buckets.get(caller);
    if (!bucket) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(now, rate);
      bucket = { tokens: rate.burst, at: now };
      this.buckets.set(caller, bucket);
    }
    bucket.tokens = Math.min(rate.burst, bucket.tokens + ((now - bucket.at) / 1000) * rate.perSecond);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / rate.perSecond;
  }

  private sweep(now: number, rate: Rate): void {
    for (const [caller, bucket] of this.buckets)
      if (bucket.tokens + ((now - bucket.at) / 1000) * rate.perSecond >= rate.burst) this.buckets.delete(caller);
  }
}

/** Open streams, by caller and in all. */
export class StreamSlots {
  private readonly byCaller = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: Pick<EdgeOptions, 'maxWatchesPerCaller' | 'maxWatches'>) {}

  /** A slot for a new stream, given back by the function returned; a 429 when none is free. */
  take(caller: string): () => void {
    const mine = this.byCaller.get(caller) ?? 0;
    if (mine >= this.limits.maxWatchesPerCaller)
      throw new EdgeRefusal(
        429,
        `${caller} already has ${mine} watches open on this replica, the most one caller may (FENCER_MAX_WATCHES_PER_CALLER); close one first`,
        1,
      );
    if (this.total >= this.limits.maxWatches)
      throw new EdgeRefusal(
        429,
        `this replica already serves ${this.total} watches, its most (FENCER_MAX_WATCHES); try another replica`,
        1,
      );
    this.byCaller.set(caller, mine + 1);
    this.total++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total--;
      const left = (this.byCaller.get(caller) ?? 1) - 1;
      if (left === 0) this.byCaller.delete(caller);
      else this.byCaller.set(caller, left);
    };
  }

  count(caller?: string): number {
    return caller === undefined ? this.total : (this.byCaller.get(caller) ?? 0);
  }
}

/** Whether a request opens a stream the caps count: a Kubernetes watch or the dashboard's feed. */
function isStream(request: FastifyRequest): boolean {
  if (request.method !== 'GET') return false;
  if (request.routeOptions.url === '/api/v1/changes') return true;
  const watch = (request.query as { watch?: string } | undefined)?.watch;
  return watch === 'true' || watch === '1';
}

/**
 * The rate, once authenticated (onRequest, before the body is read); the stream caps once
 * authorized (preHandler: a refused request takes no slot), the slot given back when the
 * response closes.
 */
export function installLimits(app: FastifyInstance, edge: EdgeOptions): StreamSlots {
  const limiter = new RateLimiter();
  const slots = new StreamSlots(edge);
  app.addHook('onRequest', async (request) => {
    const user = request.user;
    if (isBroken('rate-limit')) return;
    // A join token is no user: such requests (a node's registration) share a budget per address,
    // a node's size, so that made-up tokens cannot flood the registration route.
    if (!user && request.joinToken) {
      const wait = limiter.take(`join-token@${request.ip}`, edge.nodeRate);
      if (wait > 0)
        throw new EdgeRefusal(
          429,
          `too many registrations with a join token from ${request.ip}: at most ${edge.nodeRate.perSecond} a second to one replica, ${edge.nodeRate.burst} at once (FENCER_NODE_RATE_LIMIT_QPS, _BURST)`,
          Math.max(1, Math.ceil(wait)),
        );
      return;
    }
    if (!user) return;
    const node = user.groups.includes(NODES_GROUP);
    const wait = limiter.take(user.username, node ? edge.nodeRate : edge.rate);
    if (wait > 0)
      throw new EdgeRefusal(
        429,
        `too many requests from ${user.username}: at most ${node ? edge.nodeRate.perSecond : edge.rate.perSecond} a second to one replica, ${node ? edge.nodeRate.burst : edge.rate.burst} at once (${node ? 'FENCER_NODE_RATE_LIMIT_QPS, _BURST' : 'FENCER_RATE_LIMIT_QPS, _BURST'})`,
        Math.max(1, Math.ceil(wait)),
      );
  });
  app.addHook('preHandler', async (request, reply) => {
    if (!request.user || !isStream(request)) return;
    const release = slots.take(request.user.username);
    reply.raw.on('close', release);
  });
  return slots;
}
