// One LISTEN connection per replica, on the channels of src/store/channels.ts: fencer_pending
// names jobs now pending and jobs that left the pending ones; fencer_room says placement has room a
// job's state does not show; fencer_assignments names a node whose assignments changed;
// fencer_outcomes says the leader has runs' outcomes to decide on; fencer_auth says who may do
// what changed. After a
// reconnect it says so, since notifications sent meanwhile are lost and everything must be
// looked at again.
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Logger } from 'pino';
import { createClient } from './db.js';
import { sql } from './sql.js';
import { delay } from '../lifecycle.js';
import { CHANNELS, pendingChanges } from './channels.js';

export interface ListenerEvents {
  room: [];
  pending: [uids: string[]];
  left: [uids: string[]];
  assignments: [node: string];
  outcomes: [];
  /** Who may do what changed (a revocation, an RBAC object): read the policy again. */
  auth: [];
  reconnected: [];
}

export class Listener extends EventEmitter<ListenerEvents> {
  private client: pg.Client | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lost: (() => void) | undefined;
  private connections = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly replica: string,
    private readonly logger: Logger,
  ) {
    super();
  }

  /**
   * Which LISTEN connection is open (1, 2, …), or null while none is: every notification sent
   * since that connection's LISTEN has reached this process or will. A change of number means
   * some may have been lost in between.
   */
  get listening(): number | null {
    return this.client ? this.connections : null;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.lost?.();
    await this.client?.end().catch(() => {});
    await this.running;
  }

  private async loop(): Promise<void> {
    let first = true;
    while (!this.stopped) {
      try {
        const client = createClient({ databaseUrl: this.databaseUrl, replica: this.replica });
        const closed = new Promise<void>((resolve) => {
          this.lost = resolve;
          client.on('error', () => resolve());
          client.on('end', () => resolve());
        });
        client.on('notification', (n) => {
          if (n.channel === CHANNELS.pending && n.payload) {
            const { pending, left } = pendingChanges(n.payload);
            if (left.length > 0) this.emit('left', left);
            if (pending.length > 0) this.emit('pending', pending);
          } else if (n.channel === CHANNELS.room) this.emit('room');
          else if (n.channel === CHANNELS.assignments && n.payload) this.emit('assignments', n.payload);
          else if (n.channel === CHANNELS.outcomes) this.emit('outcomes');
          else if (n.channel === CHANNELS.auth) this.emit('auth');
        });
        await client.connect();
        await client.query(sql('listener/listen'));
        this.connections++;
        this.client = client;
        if (!first) this.emit('reconnected');
        first = false;
        await closed;
        this.client = undefined;
        client.end().catch(() => {});
        if (!this.stopped) this.logger.warn('LISTEN connection lost; reconnecting');
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'LISTEN connection failed');
      }
      if (!this.stopped) await delay(200);
    }
  }
}
