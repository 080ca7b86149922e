// A node's reports (job started, finished, abandoned), sent to the control plane together:
// everything queued in one turn of the event loop goes in one request, and whatever is queued
// while a request is out goes in the next, answered per report. A node handed thirty jobs in one
// snapshot makes one request, not thirty; a hundred such nodes made three thousand at once and
// left no replica free to answer heartbeats (as Nomad's clients batch their allocation updates,
// for the same reason). No fixed wait: every run waits for its start report's answer and holds
// its resources until its end report's, so a wait would be paid twice by every job.
import type { Logger } from 'pino';
import type { ReplicaClient } from './replica-client.js';
import { delay } from '../lifecycle.js';
import { agentReportRetries } from './metrics.js';
import { NODE_ROUTES } from '../agent-protocol/routes.js';

export type Report =
  | { kind: 'started'; id: string }
  | { kind: 'finished'; id: string; outcome: 'Succeeded' | 'Failed'; message?: string }
  | { kind: 'abandoned'; id: string; reason?: string };

/** What the control plane said: 'not-active' means the assignment is not (or no longer) this node's. */
export type ReportOutcome = 'ok' | 'not-active';

interface Queued {
  report: Report;
  /** Checked before every attempt: false drops the report (the job stopped, the agent is going). */
  wanted: () => boolean;
  resolve: (outcome: ReportOutcome | undefined) => void;
}

const MAX_BATCH = 500;

export class ReportBatcher {
  private queue: Queued[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly client: ReplicaClient,
    private readonly node: string,
    private readonly log: Logger,
    /** Ends every retry: the reports still queued resolve undefined. */
    private readonly signal: AbortSignal,
    private readonly backoffMs: (round: number) => number,
    /**
     * How long one replica has to answer a batch. Far longer than a heartbeat's: a replica slow
     * under load is still the quickest way in, and a batch given up on was often applied all the
     * same (its claims committed, unknown to the node), so giving up early only adds load.
     */
    private readonly timeoutMs: number,
    /** Told when a batch sent at `sentAt` (local monotonic time) was answered. */
    private readonly onAnswered: (sentAt: number) => void = () => undefined,
  ) {}

  /** Resolves with the answer once a replica took the report, or undefined when it was dropped first. */
  send(report: Report, wanted: () => boolean = () => true): Promise<ReportOutcome | undefined> {
    return new Promise((resolve) => {
      this.queue.push({ report, wanted, resolve });
      this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
    });
  }

  private async flush(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const path = NODE_ROUTES.reports.path(this.node);
    for (let failures = 0; this.queue.length > 0;) {
      const batch = this.take();
      if (batch.length === 0) continue;
      try {
        const reply = await this.client.request<{ outcomes?: ReportOutcome[] }>(
          'POST',
          path,
          { reports: batch.map((q) => q.report) },
          this.signal,
          this.timeoutMs,
        );
        // A replica too busy to answer (429, 503) or failing (a deadlock, a lost connection) is no
        // answer at all: the reports go again, like those that reached no replica.
        if (reply.status === 429 || reply.status >= 500) throw new Error(`answered ${reply.status}`);
        if (reply.status >= 300) {
          // Not something a retry fixes (a malformed batch would be our bug): say so, drop it.
          this.log.error({ status: reply.status, body: reply.body, reports: batch.length }, 'reports refused');
          for (const q of batch) q.resolve(undefined);
        } else {
          this.onAnswered(reply.sentAt);
          batch.forEach((q, i) => q.resolve(reply.body?.outcomes?.[i] ?? 'not-active'));
        }
        failures = 0;
      } catch (err) {
        if (this.signal.aborted) {
          for (const q of [...batch, ...this.queue.splice(0)]) q.resolve(undefined);
          return;
        }
        this.log.debug({ err: (err as Error).message, reports: batch.length }, 'reports taken by no replica; retrying');
        agentReportRetries.inc({ node: this.node });
        this.queue.unshift(...batch);
        await delay(this.backoffMs(failures++), this.signal);
      }
    }
  }

  /** The next batch, in order, without the reports no longer wanted (resolved undefined). */
  private take(): Queued[] {
    const batch: Queued[] = [];
    while (batch.length < MAX_BATCH && this.queue.length > 0) {
      const q = this.queue.shift() as Queued;
      if (this.signal.aborted || !q.wanted()) q.resolve(undefined);
      else batch.push(q);
    }
    return batch;
  }
}
