// cron: the leader's pass over CronJobs whose next occurrence is due by the database's clock.
// For each, one fenced transaction decides with the pure rules (src/cron/schedule.ts) what the
// due occurrences become and carries it out, guarded by the cursor and version it read: a fire
// that an edit or an earlier fire overtook writes nothing, and the next pass reads afresh.
import type { Logger } from 'pino';
import type { Db } from '../store/db.js';
import type { Lease } from '../lease/lease.js';
import { fenced } from '../lease/fenced.js';
import type { CronSchedule } from './schedule.js';
import {
  fireCronJob,
  markBlocked,
  prunableJobs,
  prunableWorkflows,
  pruneJobs,
  pruneWorkflows,
  readDueCronJobs,
  type DueCronJob,
} from './store.js';
import { scheduleOf } from '../domain/cronjob-occurrence.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { ValidationError } from '../errors/validation-error.js';
import { LeaseLostError } from '../errors/lease-lost-error.js';
import { cronLatenessSeconds, cronOccurrences } from '../metrics/registry.js';
import type { ReconcileResult, Reconciler } from '../controllers/controller.js';

/** CronJobs one pass looks at, and occurrences it handles for each (a long outage takes a few passes). */
const CRONJOBS_PER_PASS = 100;
const OCCURRENCES_PER_FIRE = 100;
const PRUNE_PER_PASS = 500;
/** Finished Jobs past the history limits are looked for every this many passes (about a second). */
const PRUNE_EVERY = 10;

/**
 * A CronJob that could not fire (its namespace over quota, its queue gone, an error) is left out
 * of the passes for this long: the others are not held up behind it.
 */
const BLOCKED_RETRY_MS = 1000;

export class CronController implements Reconciler {
  readonly name = 'cron';
  /** When a blocked CronJob may be tried again (leader memory: a new leader tries at once). */
  private readonly blockedUntil = new Map<string, number>();
  /** Parsed schedules by spec text: parsing is the costly part of a pass with nothing due. */
  private readonly schedules = new Map<string, CronSchedule>();
  private passes = 0;

  constructor(
    private readonly db: Db,
    private readonly lease: Lease,
    readonly intervalMs: number,
    private readonly overdueSlackMs: number,
  ) {}

  async reconcile(log: Logger): Promise<ReconcileResult> {
    const clock = performance.now();
    for (const [uid, until] of this.blockedUntil) if (until <= clock) this.blockedUntil.delete(uid);
    const due = await readDueCronJobs(this.db, CRONJOBS_PER_PASS, [...this.blockedUntil.keys()]);
    let more = due.length === CRONJOBS_PER_PASS;
    for (const cron of due) more = (await this.fire(cron, log)) || more;
    if (this.passes++ % PRUNE_EVERY !== 0) return more ? 'requeue' : 'done';
    const prunable = await prunableJobs(this.db, PRUNE_PER_PASS);
    const workflows = await prunableWorkflows(this.db, PRUNE_PER_PASS);
    if (prunable.length > 0 || workflows.length > 0) {
      await fenced(this.db, this.lease, async (tx) => {
        if (prunable.length > 0) await pruneJobs(tx, prunable);
        if (workflows.length > 0) await pruneWorkflows(tx, workflows);
      });
      log.debug(
        { jobs: prunable.length, workflows: workflows.length },
        'deleted what finished past the history limits',
      );
    }
    return more || prunable.length === PRUNE_PER_PASS || workflows.length === PRUNE_PER_PASS ? 'requeue' : 'done';
  }

  /** Whether this CronJob has more due occurrences than one fire handled. */
  private async fire(cron: DueCronJob, log: Logger): Promise<boolean> {
    const who = `${cron.namespace}/${cron.name}`;
    try {
      const schedule = this.scheduleOf(cron);
      let result;
      try {
        result = await fenced(this.db, this.lease, (tx) =>
          fireCronJob(tx, cron, schedule, OCCURRENCES_PER_FIRE, this.overdueSlackMs),
        );
      } catch (error) {
        // Several occurrences at once (catchUp all) may be more than the namespace's pending
        // quota takes: one at a time gets through as room frees, instead of never.
        if (!(error instanceof QuotaExceededError)) throw error;
        result = await fenced(this.db, this.lease, (tx) => fireCronJob(tx, cron, schedule, 1, this.overdueSlackMs));
      }
      if (result.outcome === 'stale') {
        log.info({ cronjob: who }, 'the cronjob changed since it was read: nothing fired');
        return true;
      }
      if (result.outcome === 'replacing') {
        log.info(
          { cronjob: who, cancelled: result.cancelled },
          'replacing: the runs before are cancelled; the occurrence fires once they stopped',
        );
        return false;
      }
      for (const f of result.fired) {
        cronLatenessSeconds.observe(Math.max(0, result.now.getTime() - f.at.getTime()) / 1000);
        cronOccurrences.inc({ outcome: 'Fired', reason: '' });
      }
      for (const at of result.nameTaken)
        log.warn({ cronjob: who, at }, 'occurrence skipped: its job name is taken by another job');
      for (const s of result.decision.skip) cronOccurrences.inc({ outcome: 'Skipped', reason: s.reason });
      if (result.nameTaken.length > 0)
        cronOccurrences.inc({ outcome: 'Skipped', reason: 'NameTaken' }, result.nameTaken.length);
      if (result.fired.length > 0 || result.decision.skip.length > 0) {
        log.info(
          {
            cronjob: who,
            fired: result.fired.map((f) => f.job),
            skipped: result.decision.skip.length,
            next: result.decision.nextCursor,
          },
          'cronjob occurrences handled',
        );
      }
      return result.decision.more;
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      this.blockedUntil.set(cron.uid, performance.now() + BLOCKED_RETRY_MS);
      const reason = blockedReason(error);
      if (reason) await fenced(this.db, this.lease, (tx) => markBlocked(tx, cron, reason, (error as Error).message));
      log.warn(
        { cronjob: who, reason, err: (error as Error).message },
        'cronjob occurrence could not fire; it stays due',
      );
      return false;
    }
  }

  private scheduleOf(cron: DueCronJob): CronSchedule {
    const key = `${cron.spec.schedule}\n${cron.spec.timeZone ?? ''}`;
    let schedule = this.schedules.get(key);
    if (!schedule) {
      if (this.schedules.size > 10_000) this.schedules.clear();
      schedule = scheduleOf(cron.spec);
      this.schedules.set(key, schedule);
    }
    return schedule;
  }
}

/** Errors that the CronJob's condition names; others are logged (and the CronJob held back a moment). */
function blockedReason(error: unknown): string | null {
  if (error instanceof QuotaExceededError) return 'QuotaExceeded';
  if (error instanceof ValidationError) return 'InvalidJobTemplate';
  return null;
}
