/**
 * The leader lease.
 *
 * One row in PostgreSQL (`lease`) says who leads (holder), until when (expires_at, by the
 * database's clock) and under which epoch. Every acquisition bumps the epoch.
 *
 *                acquire (epoch+1)                 renew fails / lease not ours
 *     standby ─────────────────────────▶ leader ──────────────────────────────▶ deposed
 *        ▲                                  │ SIGTERM: release, so a standby            │
 *        └──────────────────────────────────┴───────────────────────────────────────────┘
 *
 * The lease decides *when* a replica may start leading; the epoch decides *whose* writes
 * count: every decision runs in a fenced transaction (fenced.ts) that reads the row
 * FOR SHARE and aborts unless the epoch is still ours. So a leader that froze, was replaced
 * and woke up cannot change anything, whatever it believes.
 *
 * A standby takes over when
 *   - the lease is free (released, or expired by the database's now()): this is how a
 *     *frozen* leader is replaced, one lease length after its last renewal; or
 *   - the leader's process is gone: the leader holds a session-level advisory lock keyed by
 *     its epoch (taken before the epoch becomes visible), and a standby that can take that
 *     lock knows the leader's connection is closed. PostgreSQL frees it ~7 ms after a SIGKILL,
 *     so a killed leader is replaced in well under a lease. The lock is only a hint about
 *     liveness; the lease row and its epoch stay the only source of truth.
 *
 * Trust window: a leader trusts its lease until lease length after it *sent* its last
 * successful renewal (local monotonic clock), minus a margin; past that it stops deciding
 * even before it learns it was deposed. The fence does not depend on this window.
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Logger } from 'pino';
import { createClient, inTransaction, type Db } from '../store/db.js';
import { sql } from '../store/sql.js';
import { Wakeup, delay } from '../lifecycle.js';
import { leaderChanges, leaseRenewals, takeoverSeconds } from '../metrics/registry.js';

const LIVENESS_LOCK_NAMESPACE = 7_310_002;

export interface LeaseOptions {
  databaseUrl: string;
  replica: string;
  leaseMs: number;
  renewMs: number;
  standbyPollMs: number;
  /**
   * The death rule's silence timeout: the lease row keeps how long it went unheard (its lapse)
   * until some holder was heard for this long in a row, and a renewal after a gap of half of it
   * starts the grace again (migration 0031, lease/take.sql, lease/renew.sql).
   */
  silentMs: number;
  /** Sessions idle inside a transaction longer than this end (see connection()). */
  idleInTxTimeoutMs?: number;
  logger: Logger;
}

export interface LeaseEvents {
  /** We now lead under this epoch. */
  elected: [epoch: number];
  /** We no longer lead (deposed, lost our connection, or stepped down). */
  deposed: [epoch: number, reason: string];
}

interface LeaseRow {
  holder: string | null;
  epoch: number;
  free: boolean;
}

export class Lease extends EventEmitter<LeaseEvents> {
  private client: pg.Client | undefined;
  private leading: { epoch: number; trustedUntil: number } | undefined;
  private readonly wakeup = new Wakeup();
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly opts: LeaseOptions) {
    super();
  }

  /** Our epoch while we lead and our lease is within its trust window; otherwise null. */
  epoch(): number | null {
    if (!this.leading) return null;
    if (performance.now() > this.leading.trustedUntil) return null;
    return this.leading.epoch;
  }

  isLeader(): boolean {
    return this.epoch() !== null;
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Ask the loop to look at the lease now (e.g. after a fenced transaction saw a new epoch). */
  nudge(): void {
    this.wakeup.nudge();
  }

  /** Graceful: a leader releases the lease so a standby takes over at once. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.wakeup.nudge();
      await this.running;
      if (this.leading && this.client) {
        const { epoch } = this.leading;
        await this.client.query(sql('lease/release'), [this.opts.replica, epoch]).catch(() => {});
        this.depose('stepped down');
      }
      await this.client?.end().catch(() => {});
      this.client = undefined;
    })();
    return this.stopping;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const client = await this.connection();
        if (this.leading) await this.renew(client);
        else await this.tryAcquire(client);
      } catch (err) {
        this.opts.logger.warn({ err: (err as Error).message }, 'lease connection failed');
        this.dropConnection();
        await delay(100);
      }
      if (this.stopped) break;
      await this.wakeup.sleep(this.leading ? this.opts.renewMs : this.opts.standbyPollMs);
    }
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    // A replica frozen inside an acquisition holds the lease row FOR UPDATE, which would stall
    // every other replica: its session must die as a frozen leader's decision session does.
    const client = createClient({
      databaseUrl: this.opts.databaseUrl,
      replica: this.opts.replica,
      idleInTxTimeoutMs: this.opts.idleInTxTimeoutMs,
    });
    client.on('error', () => this.dropConnection());
    await client.connect();
    // A renewal stuck behind a frozen transaction must not hang the loop forever.
    await client.query(sql('lease/statement_timeout'), [String(Math.max(500, this.opts.leaseMs))]);
    this.client = client;
    return client;
  }

  private dropConnection(): void {
    const client = this.client;
    this.client = undefined;
    client?.end().catch(() => {});
    // Our liveness lock went with the connection: a standby may take over any moment now.
    if (this.leading) this.depose('lost the lease connection');
  }

  private async renew(client: pg.Client): Promise<void> {
    const leading = this.leading!;
    const sentAt = performance.now();
    const result = await client
      .query(sql('lease/renew'), [this.opts.replica, leading.epoch, this.opts.leaseMs, this.opts.silentMs])
      .catch((err: unknown) => {
        leaseRenewals.inc({ result: 'failed' });
        throw err;
      });
    leaseRenewals.inc({ result: result.rowCount === 0 ? 'lost' : 'renewed' });
    if (result.rowCount === 0) {
      this.depose('the lease is no longer ours');
      await this.unlockLiveness(client, leading.epoch);
      return;
    }
    if (this.leading === leading) leading.trustedUntil = sentAt + this.trustMs();
  }

  private trustMs(): number {
    // Stop deciding a little before the database could hand the lease to someone else.
    return this.opts.leaseMs - Math.min(250, this.opts.leaseMs / 4);
  }

  private async tryAcquire(client: pg.Client): Promise<void> {
    const seen = (await client.query<LeaseRow>(sql('lease/read'))).rows[0]!;
    let leaderGone = false;
    if (!seen.free && seen.holder !== this.opts.replica) {
      leaderGone = await this.leaderConnectionGone(client, seen.epoch);
      if (!leaderGone) return;
    }
    if (seen.holder === this.opts.replica && !seen.free) {
      // Ours from before a restart or a lost connection, but we no longer hold the liveness
      // lock: take it again under a new epoch rather than trust an old one.
      leaderGone = true;
    }
    await this.acquire(client, seen.epoch, leaderGone);
  }

  /** True when nobody holds the leader's liveness lock for this epoch. */
  private async leaderConnectionGone(client: pg.Client, epoch: number): Promise<boolean> {
    const key = livenessKey(epoch);
    const { rows } = await client.query<{ got: boolean }>(sql('lease/liveness_try_lock'), [
      LIVENESS_LOCK_NAMESPACE,
      key,
    ]);
    if (!rows[0]!.got) return false;
    await client.query(sql('lease/liveness_unlock'), [LIVENESS_LOCK_NAMESPACE, key]);
    return true;
  }

  private async acquire(client: pg.Client, seenEpoch: number, leaderGone: boolean): Promise<void> {
    // The liveness lock taken for the next epoch, to give back if the attempt fails after it.
    const held: { epoch?: number } = {};
    try {
      // Undefined when the lease may not be taken; nothing was written then, so the commit that
      // ends the attempt only releases the row lock, as a rollback would.
      const won = await inTransaction(client, async () => {
        const row = (await client.query<LeaseRow>(sql('lease/lock'))).rows[0]!;
        const mayTake = row.free || (leaderGone && row.epoch === seenEpoch);
        if (!mayTake) return undefined;
        held.epoch = row.epoch + 1;
        // Hold the liveness lock of the new epoch before anyone can see that epoch.
        const { rows } = await client.query<{ got: boolean }>(sql('lease/liveness_try_lock'), [
          LIVENESS_LOCK_NAMESPACE,
          livenessKey(held.epoch),
        ]);
        if (!rows[0]!.got) {
          held.epoch = undefined;
          return undefined;
        }
        const sentAt = performance.now();
        const taken = await client.query<{ epoch: number; since_alive_seconds: number | null }>(sql('lease/take'), [
          this.opts.replica,
          this.opts.leaseMs,
          this.opts.silentMs,
        ]);
        return { row, sentAt, taken: taken.rows[0]! };
      });
      if (!won) return;
      const { row, sentAt } = won;
      const { epoch, since_alive_seconds: sinceAlive } = won.taken;
      leaderChanges.inc();
      // A lease that had a holder before: how long the cluster went without a live leader.
      if (sinceAlive !== null && row.epoch > 0) takeoverSeconds.observe(sinceAlive);
      this.leading = { epoch, trustedUntil: sentAt + this.trustMs() };
      this.opts.logger.info(
        { epoch, previousEpoch: row.epoch, previousHolder: row.holder, leaderGone },
        'elected leader',
      );
      this.emit('elected', epoch);
    } catch (err) {
      if (held.epoch !== undefined) await this.unlockLiveness(client, held.epoch);
      throw err;
    }
  }

  private async unlockLiveness(client: pg.Client, epoch: number): Promise<void> {
    await client.query(sql('lease/liveness_unlock'), [LIVENESS_LOCK_NAMESPACE, livenessKey(epoch)]).catch(() => {});
  }

  private depose(reason: string): void {
    const leading = this.leading;
    if (!leading) return;
    this.leading = undefined;
    this.opts.logger.warn({ epoch: leading.epoch, reason }, 'no longer leader');
    this.emit('deposed', leading.epoch, reason);
  }
}

function livenessKey(epoch: number): number {
  return epoch % 2_147_483_647;
}

/** The lease row as any replica reads it, for status pages. */
export async function readLease(
  db: Db,
): Promise<{ holder: string | null; epoch: number; acquired_at: Date | null; expires_at: Date | null; free: boolean }> {
  return (await db.query(sql('lease/read'))).rows[0];
}
