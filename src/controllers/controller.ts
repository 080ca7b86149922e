// The one shape of every controller: a loop that, while this replica leads, runs reconcile()
// every intervalMs or sooner when nudged (a NOTIFY). reconcile() reads the current state,
// compares it with what is wanted and writes the difference once, in a fenced transaction;
// running it twice is harmless, so a missed or repeated nudge costs nothing.
import type { Logger } from 'pino';
import { DecisionThread, Wakeup, delay } from '../lifecycle.js';
import type { Lease } from '../lease/lease.js';
import { LeaseLostError } from '../errors/lease-lost-error.js';
import { decisionWaitSeconds, fencedRejections, reconcileSeconds, reconciles } from '../metrics/registry.js';

export type ReconcileResult = 'done' | 'requeue';

export interface Reconciler {
  readonly name: string;
  readonly intervalMs: number;
  /**
   * The rest to take after the pass just run, however often nudged meanwhile (0 when absent): while
   * a backlog waits, a burst of NOTIFYs (a job ending every few milliseconds) becomes one pass over
   * their sum instead of one pass each.
   */
  restMs?(): number;
  reconcile(log: Logger): Promise<ReconcileResult>;
}

export class Controller {
  private readonly wakeup = new Wakeup();
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private stopped = false;
  private passes = 0;

  constructor(
    private readonly reconciler: Reconciler,
    private readonly lease: Lease,
    private readonly logger: Logger,
    private readonly thread: DecisionThread,
    /** Told of each fenced transaction refused (the replica records it as a cluster event). */
    private readonly onFencedRejection: (
      controller: string,
      cause: 'epoch' | 'session',
      err: Error,
      epoch: number,
    ) => void = () => undefined,
  ) {}

  start(): void {
    this.running ??= this.loop();
  }

  nudge(): void {
    this.wakeup.nudge();
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.wakeup.nudge();
      await this.running;
    })();
    return this.stopping;
  }

  private async loop(): Promise<void> {
    const { name, intervalMs } = this.reconciler;
    while (!this.stopped) {
      let result: ReconcileResult = 'done';
      const epoch = this.lease.epoch();
      if (epoch !== null) {
        const log = this.logger.child({ controller: name, epoch, reconcile: ++this.passes });
        const waited = decisionWaitSeconds.startTimer({ controller: name });
        let end: (() => void) | undefined;
        try {
          result = await this.thread.run(() => {
            waited();
            end = reconcileSeconds.startTimer({ controller: name });
            return this.reconciler.reconcile(log);
          });
          reconciles.inc({ controller: name, result });
        } catch (err) {
          this.onError(err, log, epoch);
        } finally {
          end?.();
        }
      }
      if (result === 'requeue') continue;
      const rest = this.reconciler.restMs?.() ?? 0;
      if (rest > 0 && !this.stopped) await delay(rest);
      await this.wakeup.sleep(Math.max(0, intervalMs - rest));
    }
  }

  private onError(err: unknown, log: Logger, epoch: number): void {
    const { name } = this.reconciler;
    if (err instanceof LeaseLostError || isSessionKilled(err)) {
      // Someone else leads now (or our session died with our share lock): nothing was written.
      const cause = err instanceof LeaseLostError ? 'epoch' : 'session';
      fencedRejections.inc({ cause });
      this.onFencedRejection(name, cause, err as Error, epoch);
      reconciles.inc({ controller: name, result: 'lease_lost' });
      log.warn({ err: (err as Error).message }, 'fenced transaction rejected');
      this.lease.nudge();
      return;
    }
    reconciles.inc({ controller: name, result: 'error' });
    log.error({ err: (err as Error).message }, 'reconcile failed');
  }
}

/** The session was ended under us, e.g. by idle_in_transaction_session_timeout after a freeze. */
function isSessionKilled(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  const message = (err as Error).message ?? '';
  return code === '25P03' || code === '57P01' || /terminat|Connection terminated/i.test(message);
}
