// CronJobs as users see them: apply (create or edit), read, delete (any replica, no lease), and
// the leader's side: read the due ones, fire an occurrence (one fenced statement guards it),
// prune finished Jobs past the history limits.
import type { Db, Tx } from './db.js';
import { transaction } from './db.js';
import { sql } from './sql.js';
import type { CronJobListRow, CronJobRow } from './rows.js';
import type { CronJobRequest, CronJobSpec } from '../domain/resources.js';
import { TERMINAL_PHASES } from '../domain/resources.js';
import { nextOccurrence, parseSchedule, type CronSchedule, type FireDecision } from '../scheduling/cron.js';
import { withdrawAssignments } from './assignments.js';
import { submitInTx } from './jobs.js';
import { occurrenceJob } from '../api/validation/cronjob.js';
import { isDeepStrictEqual } from 'node:util';

export type CronApplyOutcome = 'created' | 'configured' | 'unchanged';

/**
 * Creates a CronJob, or edits one. An edit moves the version, so a fire decided before it does
 * nothing, and restarts the cursor at the new schedule's first occurrence not before the old
 * cursor or now, whichever is earlier, and after the last occurrence already handled: an edit
 * never fires an occurrence twice, and an occurrence that was due but not yet fired is decided
 * under the new spec.
 */
export async function applyCronJob(db: Db, request: CronJobRequest): Promise<{ outcome: CronApplyOutcome; cronJob: CronJobListRow }> {
  const schedule = parseSchedule(request.spec.schedule, request.spec.timeZone);
  return transaction(db, async (tx) => {
    let row = (await tx.query<CronJobRow>(sql('cronjobs/lock'), [request.namespace, request.name])).rows[0];
    if (!row) {
      const now = await clock(tx);
      const created = (await tx.query<CronJobRow>(sql('cronjobs/insert'), [request.namespace, request.name, ...columns(request), nextOccurrence(schedule, now)])).rows[0];
      if (created) return { outcome: 'created' as const, cronJob: (await readCronJob(tx, request.namespace, request.name))! };
      // Created by another request since the lock found nothing: edit that one.
      row = (await tx.query<CronJobRow>(sql('cronjobs/lock'), [request.namespace, request.name])).rows[0]!;
    }
    if (isDeepStrictEqual(row.spec, request.spec) && isDeepStrictEqual(row.labels, request.labels)) {
      return { outcome: 'unchanged' as const, cronJob: (await readCronJob(tx, request.namespace, request.name))! };
    }
    const now = await clock(tx);
    const from = Math.min(row.next_fire_at?.getTime() ?? Infinity, now.getTime()) - 1;
    const after = new Date(Math.max(from, row.last_handled_at?.getTime() ?? -Infinity));
    await tx.query(sql('cronjobs/update'), [row.uid, ...columns(request), nextOccurrence(schedule, after)]);
    return { outcome: 'configured' as const, cronJob: (await readCronJob(tx, request.namespace, request.name))! };
  });
}

function columns(r: CronJobRequest): unknown[] {
  const s = r.spec;
  return [
    JSON.stringify(r.labels),
    JSON.stringify(s),
    s.schedule,
    s.timeZone,
    s.suspend,
    s.concurrencyPolicy,
    s.catchUp,
    s.startingDeadlineSeconds ?? null,
    s.successfulJobsHistoryLimit,
    s.failedJobsHistoryLimit,
  ];
}

async function clock(tx: Tx): Promise<Date> {
  return (await tx.query<{ now: Date }>(sql('cronjobs/clock'))).rows[0]!.now;
}

async function readCronJob(db: Db | Tx, namespace: string, name: string): Promise<CronJobListRow | undefined> {
  return (await db.query<CronJobListRow>(sql('cronjobs/list'), [namespace, name])).rows[0];
}

export async function getCronJob(db: Db, namespace: string, name: string): Promise<CronJobListRow | undefined> {
  return readCronJob(db, namespace, name);
}

export async function listCronJobs(db: Db, namespace: string | null): Promise<CronJobListRow[]> {
  return (await db.query<CronJobListRow>(sql('cronjobs/list'), [namespace, null])).rows;
}

export interface OccurrenceRow {
  scheduled_at: Date;
  outcome: 'Fired' | 'Skipped';
  reason: string | null;
  job: string | null;
  fired_at: Date;
  started_at: Date | null;
}

/** A CronJob's most recent occurrences, newest first (describe cronjob). */
export async function recentOccurrences(db: Db, cronJobUid: string, limit: number): Promise<OccurrenceRow[]> {
  return (await db.query<OccurrenceRow>(sql('cronjobs/occurrences'), [cronJobUid, limit])).rows;
}

/** Deletes a CronJob and its Jobs, stopping those that run; their history and its occurrences stay. */
export async function deleteCronJob(db: Db, namespace: string, name: string, overdueSlackMs: number): Promise<CronJobListRow | undefined> {
  return transaction(db, async (tx) => {
    const row = (await tx.query<CronJobRow>(sql('cronjobs/lock'), [namespace, name])).rows[0];
    if (!row) return undefined;
    const before = (await readCronJob(tx, namespace, name))!;
    const jobs = (await tx.query<{ uid: string; phase: string; assignment_id: string | null }>(sql('cronjobs/lock_jobs'), [row.uid])).rows;
    const open = jobs.filter((j) => !TERMINAL_PHASES.includes(j.phase as never));
    await withdrawAssignments(tx, open.flatMap((j) => (j.assignment_id ? [j.assignment_id] : [])), overdueSlackMs);
    await tx.query(sql('cronjobs/delete'), [row.uid]);
    return before;
  });
}

// The leader's side (src/controllers/cron/).

/** A due CronJob as the cron controller reads it, with the database's clock. */
export interface DueCronJob {
  uid: string;
  namespace: string;
  name: string;
  spec: CronJobSpec;
  version: number;
  next_fire_at: Date;
  suspend: boolean;
  catch_up: CronJobRow['catch_up'];
  concurrency_policy: CronJobRow['concurrency_policy'];
  starting_deadline_seconds: number | null;
  now: Date;
  active: number;
}

export async function readDueCronJobs(db: Db, limit: number): Promise<DueCronJob[]> {
  return (await db.query<DueCronJob>(sql('cronjobs/due'), [limit])).rows;
}

/** Test-only guard switches (src/guards.ts): each drops one of the fire's three guards. */
export interface FireGuards {
  versionBroken: boolean;
  cursorBroken: boolean;
  nameBroken: boolean;
}

export type FireResult = { outcome: 'stale' } | { outcome: 'done'; fired: Array<{ at: Date; job: string }> };

/**
 * One fire, inside the leader's fenced transaction: advance the cursor from the value read at the
 * version read (else nothing: 'stale'), cancel the runs Replace replaces, make each occurrence's
 * Job under its deterministic name (a name already taken means that occurrence was fired before:
 * nothing more), and record every occurrence handled. Throws what admitting the Jobs throws
 * (a namespace over its pending quota, a queue that no longer exists): nothing is written then.
 */
export async function fireOccurrences(
  tx: Tx,
  cron: DueCronJob,
  schedule: CronSchedule,
  decision: FireDecision,
  overdueSlackMs: number,
  guards: FireGuards,
): Promise<FireResult> {
  const handled = [...decision.fire, ...decision.skip.map((s) => s.at)];
  if (handled.length === 0) return { outcome: 'done', fired: [] };
  const last = new Date(Math.max(...handled.map((d) => d.getTime())));
  const lastFired = decision.fire.length > 0 ? decision.fire[decision.fire.length - 1]! : null;
  const advanced = await tx.query(sql('cronjobs/advance'), [
    cron.uid,
    cron.version,
    cron.next_fire_at,
    decision.nextCursor,
    last,
    lastFired,
    guards.versionBroken,
    guards.cursorBroken,
  ]);
  if (advanced.rowCount === 0) return { outcome: 'stale' };

  if (decision.replaceActive) {
    const active = (await tx.query<{ uid: string; assignment_id: string | null }>(sql('cronjobs/active_jobs'), [cron.uid])).rows;
    await withdrawAssignments(tx, active.flatMap((j) => (j.assignment_id ? [j.assignment_id] : [])), overdueSlackMs);
    await tx.query(sql('cronjobs/replace'), [active.map((j) => j.uid), `replaced by the next run of cronjob ${cron.name}`]);
  }

  const requests = decision.fire.map((at) => occurrenceJob(cron, schedule, at, guards.nameBroken));
  const results = requests.length > 0 ? await submitInTx(tx, requests, null, cron.uid) : [];
  const fired = decision.fire.flatMap((at, i) => (results[i]!.outcome === 'created' ? [{ at, uid: results[i]!.job.uid, job: results[i]!.job.name }] : []));
  const records = [
    ...fired.map((f) => ({ at: f.at, outcome: 'Fired', reason: null, uid: f.uid, job: f.job })),
    ...decision.skip.map((s) => ({ at: s.at, outcome: 'Skipped', reason: s.reason as string | null, uid: null, job: null })),
  ];
  await tx.query(sql('cronjobs/record'), [
    cron.uid,
    `${cron.namespace}/${cron.name}`,
    cron.version,
    records.map((r) => r.at),
    records.map((r) => r.outcome),
    records.map((r) => r.reason),
    records.map((r) => r.uid),
    records.map((r) => r.job),
    schedule.pattern,
    schedule.timeZone,
  ]);
  return { outcome: 'done', fired: fired.map((f) => ({ at: f.at, job: f.job })) };
}

/** Says on the CronJob why its due occurrence could not fire (it stays due: the next pass tries again). */
export async function markBlocked(tx: Tx, cron: DueCronJob, reason: string, message: string): Promise<void> {
  await tx.query(sql('cronjobs/block'), [cron.uid, cron.version, reason, message]);
}

/** Finished Jobs past their CronJob's history limits, oldest first (read outside any transaction). */
export async function prunableJobs(db: Db, limit: number): Promise<string[]> {
  return (await db.query<{ uid: string }>(sql('cronjobs/prunable'), [limit])).rows.map((r) => r.uid);
}

export async function pruneJobs(tx: Tx, uids: string[]): Promise<void> {
  await tx.query(sql('cronjobs/prune'), [uids]);
}
