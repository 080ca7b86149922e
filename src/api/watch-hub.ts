// The watch streams of the nodes connected to this replica. A stream sends a full snapshot of
// its node's active assignments whenever they may have changed (NOTIFY), after the LISTEN
// connection came back, and every few seconds as a safety net; keepalives in between. Snapshots
// of one stream are computed one at a time, so they reach the node in the order they were read.
// One timer serves every stream: with a hundred nodes, a timer (and a query) per stream and
// second was a real share of two cores. The same timer records, in one statement, when
// assignments were first sent (their confirm deadlines): a moment later rather than at once, so a
// run its node claimed meanwhile, nearly every one, costs no write and no wait on its row.
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import { markDelivered, snapshotFor } from '../agent-protocol/reports-store.js';
import { isBroken } from '../testing/broken-guards.js';
import { closeWatch } from '../agent-protocol/nodes-store.js';
import type { WatchMessage } from '../agent-protocol/messages.js';
import { faultFor } from '../testing/overload-faults.js';

const KEEPALIVE_MS = 500;
/**
 * The safety net only: NOTIFY is transactional and a broken LISTEN connection refreshes every
 * stream when it comes back, so this catches nothing in normal operation.
 */
const RESYNC_MS = 5000;

/** First sends not yet recorded, by assignment id: the earliest send of each counts. */
class DeliveryLog {
  private sent = new Map<string, { node: string; at: number }>();
  private flushing = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly confirmTimeoutMs: number,
  ) {}

  add(node: string, ids: readonly string[], at: number): void {
    for (const id of ids) if (!this.sent.has(id)) this.sent.set(id, { node, at });
  }

  /**
   * Records the sends so far, each deadline from its own send time. If this replica dies first, the
   * next snapshot of any replica sends them again (confirm_by still NULL) and records that.
   */
  flush(now: number): void {
    if (this.flushing || this.sent.size === 0) return;
    const batch = [...this.sent].map(([id, s]) => ({ id, node: s.node, agoMs: now - s.at }));
    this.sent = new Map();
    this.flushing = true;
    markDelivered(this.db, batch, this.confirmTimeoutMs)
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not record when assignments were sent'))
      .finally(() => (this.flushing = false));
  }
}

class WatchStream {
  private inFlight: Promise<void> | undefined;
  private dirty = false;
  /** When the safety-net snapshot is due (monotonic ms); spread by the streams' opening times. */
  resyncAt = performance.now() + RESYNC_MS;
  closed = false;
  /**
   * Test-only (FENCER_TEST_FAULTS, snapshots.delayMs): snapshots read on time, each delivered
   * delayMs after its read, in order, or as soon as the fault is lifted. A late link, not a slow
   * read: the node still hears of every assignment the control plane held for a moment.
   */
  private readonly late: Array<{ message: WatchMessage; undelivered: string[]; dueAt: number }> = [];
  private lateTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly node: string,
    readonly session: string,
    private readonly res: ServerResponse,
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly deliveries: DeliveryLog,
  ) {}

  /** The hub's tick: a keepalive (even while a snapshot is being read), and the safety-net snapshot when due. */
  tick(now: number): void {
    this.write({ type: 'keepalive' });
    if (this.late.length > 0) this.deliverLate();
    if (now >= this.resyncAt) this.refresh();
  }

  refresh(): void {
    if (this.closed) return;
    this.resyncAt = performance.now() + RESYNC_MS;
    if (this.inFlight) {
      this.dirty = true;
      return;
    }
    this.inFlight = (async () => {
      do {
        this.dirty = false;
        try {
          const readAt = performance.now();
          const { ours, assignments, undelivered } = await snapshotFor(this.db, this.node, this.session);
          if (!ours) {
            // Another session holds the node's watch (a new process, or this one reconnected
            // elsewhere): what the node is given now is none of this stream's business.
            this.logger.info({ node: this.node, session: this.session }, 'watch superseded; ending its stream');
            this.res.end();
            this.close();
            break;
          }
          // Broken on purpose (src/testing/broken-guards.ts, confirm-at-delivery): the deadline starts at the read.
          const atRead = isBroken('confirm-at-delivery');
          if (atRead) this.deliveries.add(this.node, undelivered, readAt);
          this.deliver({ type: 'snapshot', assignments }, readAt, atRead ? [] : undelivered);
        } catch (err) {
          this.logger.warn({ node: this.node, err: (err as Error).message }, 'watch snapshot failed');
        }
      } while (this.dirty && !this.closed);
      this.inFlight = undefined;
    })();
  }

  private deliver(message: WatchMessage, readAt: number, undelivered: string[] = []): void {
    const delayMs = faultFor('snapshots', this.node)?.delayMs;
    if (!delayMs && this.late.length === 0) return this.write(message, undelivered);
    this.late.push({ message, undelivered, dueAt: readAt + (delayMs ?? 0) });
    this.deliverLate();
  }

  private deliverLate(): void {
    const lifted = !faultFor('snapshots', this.node)?.delayMs;
    const now = performance.now();
    while (this.late.length > 0 && (lifted || this.late[0]!.dueAt <= now)) {
      const { message, undelivered } = this.late.shift()!;
      this.write(message, undelivered);
    }
    clearTimeout(this.lateTimer);
    const next = this.late[0];
    if (next && !this.closed) this.lateTimer = setTimeout(() => this.deliverLate(), Math.max(0, next.dueAt - now));
  }

  /** Sends a message; assignments it carries for the first time get their confirm deadline from now. */
  private write(message: WatchMessage, undelivered: readonly string[] = []): void {
    if (this.closed) return;
    this.res.write(`${JSON.stringify(message)}\n`);
    // After the write, never before: the deadline measures the node, not this replica.
    this.deliveries.add(this.node, undelivered, performance.now());
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.lateTimer);
    this.late.length = 0;
  }
}

export class WatchHub {
  private readonly streams = new Map<string, Set<WatchStream>>();
  private shuttingDown = false;
  private readonly ticker: NodeJS.Timeout;
  private readonly deliveries: DeliveryLog;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    /** How long a node has to claim an assignment from when it is first sent to it. */
    private readonly confirmTimeoutMs: number,
  ) {
    this.deliveries = new DeliveryLog(db, logger, confirmTimeoutMs);
    this.ticker = setInterval(() => {
      const now = performance.now();
      for (const set of this.streams.values()) for (const stream of set) stream.tick(now);
      this.deliveries.flush(performance.now());
    }, KEEPALIVE_MS);
    this.ticker.unref();
  }

  /**
   * Serves one node's stream on res until either side closes it. Call it only once the session
   * is recorded in the database and the headers are sent: nothing may reach the node before.
   */
  open(node: string, session: string, res: ServerResponse): WatchStream {
    const stream = new WatchStream(node, session, res, this.db, this.logger, this.deliveries);
    let set = this.streams.get(node);
    if (!set) this.streams.set(node, (set = new Set()));
    set.add(stream);
    const onClose = () => {
      stream.close();
      set.delete(stream);
      if (set.size === 0) this.streams.delete(node);
      // Our own shutdown is not the node's disconnection: it will reconnect elsewhere.
      if (!this.shuttingDown) {
        closeWatch(this.db, node, stream.session).catch((err: Error) =>
          this.logger.warn({ node, err: err.message }, 'could not record watch close'),
        );
      }
    };
    if (res.destroyed)
      onClose(); // the node went away while its session was being recorded
    else res.on('close', onClose);
    stream.refresh();
    return stream;
  }

  changed(node: string): void {
    for (const stream of this.streams.get(node) ?? []) stream.refresh();
  }

  refreshAll(): void {
    for (const set of this.streams.values()) for (const stream of set) stream.refresh();
  }

  shutdown(): void {
    this.shuttingDown = true;
    clearInterval(this.ticker);
    this.deliveries.flush(performance.now());
  }

  count(): number {
    let n = 0;
    for (const set of this.streams.values()) n += set.size;
    return n;
  }
}
