// cron: the leader's pass over CronJobs whose next occurrence is due by the database's clock.
// For each, the pure rules (src/scheduling/cron.ts) decide what the due occurrences become, and
// one fenced transaction carries it out, guarded by the cursor and version it read: a fire from a
// read that an edit or an earlier fire overtook writes nothing, and the next pass reads afresh.
import type { Logger } from 'pino';
import type { Db } from '../../store/db.js';
import type { Lease } from '../../lease/lease.js';
import { fenced } from '../../lease/fenced.js';
import { guardBroken } from '../../guards.js';
import { decideFire, type CronSchedule } from '../../scheduling/cron.js';
import { fireOccurrences, markBlocked, prunableJobs, pruneJobs, readDueCronJobs, type DueCronJob, type FireGuards } from '../../store/cronjobs.js';
import { scheduleOf } from '../../api/validation/cronjob.js';
import { QuotaExceededError } from '../../errors/quota-exceeded-error.js';
import { ValidationError } from '../../errors/validation-error.js';
import { cronLatenessSeconds, cronOccurrences } from '../../metrics/registry.js';
import type { ReconcileResult, Reconciler } from '../controller.js';

/** CronJobs one pass looks at, and occurrences it handles for each (a long outage takes a few passes). */
const CRONJOBS_PER_PASS = 100;
const OCCURRENCES_PER_FIRE = 100;
const PRUNE_PER_PASS = 500;
/** Finished Jobs past the history limits are looked for every this many passes (about a second). */
const PRUNE_EVERY = 10;

/** A CronJob that could not fire (its namespace over quota, its queue gone) is tried again after this. */
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
    const guards: FireGuards = { versionBroken: guardBroken('cron-version'), cursorBroken: guardBroken('cron-cursor'), nameBroken: guardBroken('cron-name') };
    const due = await readDueCronJobs(this.db, CRONJOBS_PER_PASS);
    let more = due.length === CRONJOBS_PER_PASS;
    for (const cron of due) {
      if ((this.blockedUntil.get(cron.uid) ?? 0) > performance.now()) continue;
      this.blockedUntil.delete(cron.uid);
      more = (await this.fire(cron, guards, log)) || more;
    }
    if (this.passes++ % PRUNE_EVERY !== 0) return more ? 'requeue' : 'done';
    const prunable = await prunableJobs(this.db, PRUNE_PER_PASS);
    if (prunable.length > 0) {
      await fenced(this.db, this.lease, (tx) => pruneJobs(tx, prunable));
      log.debug({ jobs: prunable.length }, 'deleted finished jobs past their history limits');
    }
    return more || prunable.length === PRUNE_PER_PASS ? 'requeue' : 'done';
  }

  /** Whether this CronJob has more due occurrences than one fire handles. */
  private async fire(cron: DueCronJob, guards: FireGuards, log: Logger): Promise<boolean> {
    const schedule = this.scheduleOf(cron);
    const decision = decideFire({
      schedule,
      cursor: cron.next_fire_at,
      now: cron.now,
      suspend: cron.suspend,
      catchUp: cron.catch_up,
      startingDeadlineSeconds: cron.starting_deadline_seconds,
      concurrencyPolicy: cron.concurrency_policy,
      active: cron.active,
      maxOccurrences: OCCURRENCES_PER_FIRE,
    });
    const who = `${cron.namespace}/${cron.name}`;
    try {
      const result = await fenced(this.db, this.lease, (tx) => fireOccurrences(tx, cron, schedule, decision, this.overdueSlackMs, guards));
      if (result.outcome === 'stale') {
        log.info({ cronjob: who }, 'the cronjob changed since it was read: nothing fired');
        return true;
      }
      for (const f of result.fired) {
        cronLatenessSeconds.observe(Math.max(0, cron.now.getTime() - f.at.getTime()) / 1000);
        cronOccurrences.inc({ outcome: 'Fired', reason: '' });
      }
      for (const s of decision.skip) cronOccurrences.inc({ outcome: 'Skipped', reason: s.reason });
      if (result.fired.length > 0 || decision.skip.length > 0) {
        log.info({ cronjob: who, fired: result.fired.map((f) => f.job), skipped: decision.skip.length, next: decision.nextCursor }, 'cronjob occurrences handled');
      }
      return decision.more;
    } catch (error) {
      const blocked = blockedReason(error);
      if (!blocked) throw error;
      this.blockedUntil.set(cron.uid, performance.now() + BLOCKED_RETRY_MS);
      await fenced(this.db, this.lease, (tx) => markBlocked(tx, cron, blocked, (error as Error).message));
      log.warn({ cronjob: who, reason: blocked, err: (error as Error).message }, 'cronjob occurrence could not fire; it stays due');
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

/** Errors that leave the occurrence due and say why on the CronJob; anything else is a bug. */
function blockedReason(error: unknown): string | null {
  if (error instanceof QuotaExceededError) return 'QuotaExceeded';
  if (error instanceof ValidationError) return 'InvalidJobTemplate';
  return null;
}
