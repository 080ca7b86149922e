// What the dashboard is pushed: which kinds of object changed and which cluster events were
// recorded (both from the watch feed, in watch order), and whether the status moved (the lease, or
// which replicas are alive). A page refetches what changed through the REST API, so a push carries
// names, never objects. One poller per replica, running only while some page listens.
//
// A page hears from the feed only while the feed reads: the SSE route pings on the feed's beat,
// not on a timer of its own, so a replica that lost its database or hangs on a query goes quiet
// and its pages fall back to polling another replica.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';
import { eventsAfter, listVersion, positionOf, type WatchPosition } from '../store/watch-feed.js';
import { delay } from '../lifecycle.js';
import type { Change } from '../domain/change.js';

/** A feed subscriber: each change, and a beat after every read that went through. */
export interface FeedListener {
  change(change: Change): void;
  beat(): void;
}

const POLL_MS = 200;
const RETRY_MS = 1_000;
const BATCH = 1_000;
const JOBS_NAMED = 50;

interface Heads {
  holder: string | null;
  epoch: number;
  live: boolean;
  replicas: string;
}

export class ChangeFeed {
  private readonly listeners = new Set<FeedListener>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    /** A replica not seen for this long counts as gone (as /api/v1/status says). */
    private readonly replicaGoneMs: number,
    private readonly logger: Logger,
  ) {}

  /** Tells `listener` every change from the next beat on; returns how to stop. */
  subscribe(listener: FeedListener): () => void {
    this.listeners.add(listener);
    this.running ??= this.loop().finally(() => (this.running = undefined));
    return () => this.listeners.delete(listener);
  }

  count(): number {
    return this.listeners.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listeners.clear();
    await this.running;
  }

  private async loop(): Promise<void> {
    let position: WatchPosition | undefined;
    let heads: Heads | undefined;
    while (!this.stopped && this.listeners.size > 0) {
      try {
        if (!position) {
          const found = await positionOf(this.db, await listVersion(this.db));
          position = found === 'gone' ? { xid: '0', id: 0 } : found;
          heads = await this.heads();
          // Only once the feed reads on from here may pages refetch everything and miss nothing:
          // at its start (a page may have read before it) and after a failed read.
          this.publish({ kinds: [], status: true, events: true, all: true });
        }
        const events = await eventsAfter(this.db, position, BATCH);
        const kinds = new Set<string>();
        const jobs = new Set<string>();
        for (const event of events) {
          position = { xid: event.xid, id: event.id };
          kinds.add(event.kind);
          if (event.kind === 'Job') jobs.add(`${event.namespace}/${event.name}`);
        }
        const now = await this.heads();
        const status =
          now.holder !== heads!.holder ||
          now.epoch !== heads!.epoch ||
          now.live !== heads!.live ||
          now.replicas !== heads!.replicas;
        heads = now;
        const recorded = kinds.delete('Event');
        if (kinds.size > 0 || status || recorded) {
          this.publish({
            kinds: [...kinds],
            ...(jobs.size <= JOBS_NAMED ? { jobs: [...jobs] } : {}),
            status,
            events: recorded,
          });
        }
        for (const listener of this.listeners) listener.beat();
        if (events.length < BATCH) await delay(POLL_MS);
      } catch (err) {
        // The database is unreachable or restarting: what changed meanwhile is unknown. No beat
        // goes out, so pages that stay long enough fall back to polling elsewhere.
        this.logger.warn({ err: (err as Error).message }, 'dashboard change feed: read failed');
        position = undefined;
        await delay(RETRY_MS);
      }
    }
  }

  private async heads(): Promise<Heads> {
    return (await this.db.query<Heads>(sql('ui/heads'), [this.replicaGoneMs])).rows[0]!;
  }

  private publish(change: Change): void {
    for (const listener of this.listeners) listener.change(change);
  }
}
