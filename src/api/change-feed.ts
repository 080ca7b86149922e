// What the dashboard is pushed: which kinds of object changed (from the watch feed, in watch
// order), and whether the leadership or the cluster events moved. A page refetches what changed
// through the REST API, so a push carries names, never objects. One poller per replica, running
// only while some page listens; each page gets every change after it subscribed.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';
import { eventsAfter, listVersion, positionOf, type WatchPosition } from '../store/watch.js';
import { delay } from '../lifecycle.js';

export interface Change {
  /** Kinds with an object added, changed or deleted: Job, Workflow, CronJob, Queue, ResourceQuota, Node. */
  kinds: string[];
  /** Jobs that changed (namespace/name), when few enough to name; otherwise only the kind. */
  jobs?: string[];
  /** The lease moved: a new leader, a new epoch, or no live leader any more. */
  status: boolean;
  /** A cluster event was recorded. */
  events: boolean;
  /** Changes were missed (the feed fell behind what it keeps): refetch everything. */
  all?: boolean;
}

const POLL_MS = 200;
const RETRY_MS = 1_000;
const BATCH = 1_000;
const JOBS_NAMED = 50;

interface Heads {
  holder: string | null;
  epoch: number;
  live: boolean;
  event: number | null;
}

export class ChangeFeed {
  private readonly listeners = new Set<(change: Change) => void>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Calls `listener` with every change from now on; returns how to stop. */
  subscribe(listener: (change: Change) => void): () => void {
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
    let missed = false;
    while (!this.stopped && this.listeners.size > 0) {
      try {
        if (!position) {
          const found = await positionOf(this.db, await listVersion(this.db));
          position = found === 'gone' ? { xid: '0', id: 0 } : found;
          heads = await this.heads();
          // Only now that the feed reads on from here may the pages refetch and miss nothing.
          if (missed) this.publish({ kinds: [], status: true, events: true, all: true });
          missed = false;
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
        const status = !heads || now.holder !== heads.holder || now.epoch !== heads.epoch || now.live !== heads.live;
        const recorded = !heads || now.event !== heads.event;
        heads = now;
        if (kinds.size > 0 || status || recorded) {
          this.publish({ kinds: [...kinds], ...(jobs.size <= JOBS_NAMED ? { jobs: [...jobs] } : {}), status, events: recorded });
        }
        if (events.length < BATCH) await delay(POLL_MS);
      } catch (err) {
        // The database is unreachable or restarting: what changed meanwhile is unknown.
        this.logger.warn({ err: (err as Error).message }, 'dashboard change feed: read failed');
        position = undefined;
        missed = true;
        await delay(RETRY_MS);
      }
    }
  }

  private async heads(): Promise<Heads> {
    return (await this.db.query<Heads>(sql('ui/heads'))).rows[0]!;
  }

  private publish(change: Change): void {
    for (const listener of this.listeners) listener(change);
  }
}
