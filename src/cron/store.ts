// CronJobs as users see them: apply (create or edit), read, delete (any replica, no lease), and
// the leader's side: read the due ones, fire an occurrence (one fenced statement guards it),
// prune finished Jobs past the history limits.
import { cutPage, type PageRequest, type RowsPage } from '../domain/list-pages.js';
import { keyOf, pageParameters } from '../store/pages.js';
import type { Db, Tx } from '../store/db.js';
import { transaction } from '../store/db.js';
import { sql } from '../store/sql.js';
import type { CronJobListRow, CronJobRow } from '../store/rows.js';
import type { CronJobRequest, CronJobSpec } from '../domain/resources.js';
import { TERMINAL_PHASES } from '../domain/resources.js';
import {
  decideFire,
  nextOccurrence,
  occurrencesBetween,
  parseSchedule,
  type CronSchedule,
  type FireDecision,
} from './schedule.js';
import { withdrawAssignments } from '../store/assignments.js';
import { submitInTx } from '../store/jobs.js';
import { occurrenceJob, occurrenceWorkflow } from '../domain/cronjob-occurrence.js';
import { insertOccurrenceWorkflow } from '../workflows/store.js';
import { isDeepStrictEqual } from 'node:util';
import { isBroken } from '../testing/broken-guards.js';

export type CronApplyOutcome = 'created' | 'configured' | 'unchanged';

/**
 * Creates a CronJob, or edits one. An edit moves the version, so a fire decided before it does
 * nothing, and restarts the cursor at the new schedule's first occurrence not before the old
 * cursor or now, whichever is earlier, and after the last occurrence already handled: an edit
 * never fires an occurrence twice, and an occurrence that was due but not yet fired is decided
 * under the new spec.
 */
export async function applyCronJob(
  db: Db,
  request: CronJobRequest,
  /** An update that names the resource version it read: nothing is written unless the CronJob is at it ('stale'). */
  expectedVersion: number | null = null,
): Promise<{ outcome: CronApplyOutcome | 'stale'; cronJob: CronJobListRow }> {
  const schedule = parseSchedule(request.spec.schedule, request.spec.timeZone);
  return transaction(db, async (tx) => {
    let row = (await tx.query<CronJobRow>(sql('cron/lock'), [request.namespace, request.name])).rows[0];
    if (expectedVersion !== null && row?.watch_rv !== expectedVersion) {
      return { outcome: 'stale' as const, cronJob: (await readCronJob(tx, request.namespace, request.name))! };
    }
    if (!row) {
      const now = await clock(tx);
      const created = (
        await tx.query<CronJobRow>(sql('cron/insert'), [
          request.namespace,
          request.name,
          ...columns(request),
          nextOccurrence(schedule, now),
          JSON.stringify(request.annotations ?? {}),
        ])
      ).rows[0];
      if (created)
        return { outcome: 'created' as const, cronJob: (await readCronJob(tx, request.namespace, request.name))! };
      // Created by another request since the lock found nothing: edit that one.
      row = (await tx.query<CronJobRow>(sql('cron/lock'), [request.namespace, request.name])).rows[0]!;
    }
    if (
      isDeepStrictEqual(row.spec, request.spec) &&
      isDeepStrictEqual(row.labels, request.labels) &&
      isDeepStrictEqual(row.annotations, request.annotations ?? {})
    ) {
      return { outcome: 'unchanged' as const, cronJob: (await readCronJob(tx, request.namespace, request.name))! };
    }
    const now = await clock(tx);
    const from = Math.min(row.next_fire_at?.getTime() ?? Infinity, now.getTime()) - 1;
    const after = new Date(Math.max(from, row.last_handled_at?.getTime() ?? -Infinity));
    const cursor = nextOccurrence(schedule, after);
    // Occurrences of the old schedule that were due and not yet handled, and that the new
    // schedule will not handle: recorded Skipped (Rescheduled), so that none goes without a record.
    if (row.next_fire_at && row.next_fire_at <= now) {
      const old = parseSchedule(row.schedule, row.time_zone);
      const handledLater = (at: Date) =>
        cursor !== null &&
        at >= cursor &&
        nextOccurrence(schedule, new Date(at.getTime() - 1))?.getTime() === at.getTime();
      const passed = occurrencesBetween(old, new Date(row.next_fire_at.getTime() - 1), now, 1000).filter(
        (at) => !handledLater(at),
      );
      const records = passed.map((at) => ({ at, outcome: 'Skipped', reason: 'Rescheduled', uid: null, job: null }));
      await recordOccurrences(tx, row, old, records);
    }
    await tx.query(sql('cron/update'), [
      row.uid,
      ...columns(request),
      cursor,
      JSON.stringify(request.annotations ?? {}),
    ]);
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
  return (await tx.query<{ now: Date }>(sql('cron/clock'))).rows[0]!.now;
}

async function readCronJob(db: Db | Tx, namespace: string, name: string): Promise<CronJobListRow | undefined> {
  return (await db.query<CronJobListRow>(sql('cron/list'), [namespace, name, ...pageParameters(null)])).rows[0];
}

export async function getCronJob(db: Db, namespace: string, name: string): Promise<CronJobListRow | undefined> {
  return readCronJob(db, namespace, name);
}

export async function listCronJobs(db: Db, namespace: string | null): Promise<CronJobListRow[]> {
  return (await db.query<CronJobListRow>(sql('cron/list'), [namespace, null, ...pageParameters(null)])).rows;
}

/** A page of listCronJobs' list. */
export async function listCronJobPage(
  db: Db,
  namespace: string | null,
  page: PageRequest,
): Promise<RowsPage<CronJobListRow>> {
  const rows = (await db.query<CronJobListRow>(sql('cron/list'), [namespace, null, ...pageParameters(page)])).rows;
  return cutPage(rows, page.limit, keyOf);
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
  return (await db.query<OccurrenceRow>(sql('cron/occurrences'), [cronJobUid, limit])).rows;
}

/**
 * Deletes a CronJob and its Jobs and workflows, stopping those that run; their history and its
 * occurrences stay. With `orphan` (propagationPolicy Orphan) its Jobs and workflows run on, owned
 * by nothing.
 */
export async function deleteCronJob(
  db: Db,
  namespace: string,
  name: string,
  overdueSlackMs: number,
  orphan = false,
): Promise<CronJobListRow | undefined> {
  return transaction(db, async (tx) => {
    const row = (await tx.query<CronJobRow>(sql('cron/lock'), [namespace, name])).rows[0];
    if (!row) return undefined;
    const before = (await readCronJob(tx, namespace, name))!;
    if (orphan) await tx.query(sql('cron/orphan'), [row.uid]);
    const jobs = (
      await tx.query<{ uid: string; phase: string; assignment_id: string | null }>(sql('cron/lock_jobs'), [row.uid])
    ).rows;
    const open = jobs.filter((j) => !TERMINAL_PHASES.includes(j.phase as never));
    await withdrawAssignments(
      tx,
      open.flatMap((j) => (j.assignment_id ? [j.assignment_id] : [])),
      overdueSlackMs,
    );
    await tx.query(sql('cron/delete'), [row.uid]);
    return before;
  });
}

// The leader's side (src/cron/).

/** A due CronJob as the cron controller reads it. */
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
}

/** The due CronJobs, most overdue first, without those in `holdBack` (blocked for a while). */
export async function readDueCronJobs(db: Db, limit: number, holdBack: readonly string[] = []): Promise<DueCronJob[]> {
  return (await db.query<DueCronJob>(sql('cron/due'), [limit, holdBack])).rows;
}

export type FireResult =
  | { outcome: 'stale' }
  | { outcome: 'replacing'; cancelled: number }
  | { outcome: 'done'; decision: FireDecision; now: Date; fired: Array<{ at: Date; job: string }>; nameTaken: Date[] };

/**
 * One fire, inside the leader's fenced transaction. The decision is made here, by the database's
 * clock at this moment and with the CronJob's runs counted in this transaction, so a deadline is
 * judged when the Jobs are made, not when the CronJob was read. Then: advance the cursor from the
 * value read at the version read (else nothing: 'stale'), make each occurrence's Job under its
 * deterministic name, record every occurrence handled. A name already taken is not this
 * CronJob's occurrence fired before (the cursor rules that out) but someone else's Job: the
 * occurrence is recorded Skipped (NameTaken), never left without a record.
 *
 * Replace with runs that may still be running: cancels them (their nodes stop them) and fires
 * nothing yet; the occurrence stays due and fires once no run of the CronJob may still be running
 * (its node said it stopped, or it could at the latest have ended), so a replaced run and its
 * replacement never overlap.
 *
 * Throws what admitting the Jobs throws (a namespace over its pending quota, a queue that no
 * longer exists): nothing is written then.
 */
export async function fireCronJob(
  tx: Tx,
  cron: DueCronJob,
  schedule: CronSchedule,
  maxOccurrences: number,
  overdueSlackMs: number,
): Promise<FireResult> {
  // Broken on purpose (src/testing/broken-guards.ts): each drops one of the fire's guards.
  const versionBroken = isBroken('cron-version');
  const cursorBroken = isBroken('cron-cursor');
  const nameBroken = isBroken('cron-name');
  const now = await clock(tx);
  const busy = (await tx.query<{ busy: number }>(sql('cron/busy'), [cron.uid])).rows[0]!.busy;
  const decision = decideFire({
    schedule,
    cursor: cron.next_fire_at,
    now,
    suspend: cron.suspend,
    catchUp: cron.catch_up,
    startingDeadlineSeconds: cron.starting_deadline_seconds,
    concurrencyPolicy: cron.concurrency_policy,
    active: busy,
    maxOccurrences,
  });
  if (cron.concurrency_policy === 'Replace' && busy > 0 && decision.fire.length > 0) {
    const locked = await tx.query(sql('cron/lock_at'), [
      cron.uid,
      cron.version,
      cron.next_fire_at,
      versionBroken,
      cursorBroken,
    ]);
    if (locked.rowCount === 0) return { outcome: 'stale' };
    const active = (await tx.query<{ uid: string; assignment_id: string | null }>(sql('cron/active_jobs'), [cron.uid]))
      .rows;
    await withdrawAssignments(
      tx,
      active.flatMap((j) => (j.assignment_id ? [j.assignment_id] : [])),
      overdueSlackMs,
    );
    await tx.query(sql('cron/replace'), [active.map((j) => j.uid), `replaced by the next run of cronjob ${cron.name}`]);
    await tx.query(sql('cron/cancel_workflows'), [cron.uid]);
    if (!isBroken('cron-replace-wait')) return { outcome: 'replacing', cancelled: active.length };
  }
  const handled = [...decision.fire, ...decision.skip.map((x) => x.at)];
  if (handled.length === 0) return { outcome: 'done', decision, now, fired: [], nameTaken: [] };
  const last = new Date(Math.max(...handled.map((d) => d.getTime())));
  const lastFired = decision.fire.length > 0 ? decision.fire[decision.fire.length - 1]! : null;
  const advanced = await tx.query(sql('cron/advance'), [
    cron.uid,
    cron.version,
    cron.next_fire_at,
    decision.nextCursor,
    last,
    lastFired,
    versionBroken,
    cursorBroken,
  ]);
  if (advanced.rowCount === 0) return { outcome: 'stale' };

  const records: OccurrenceRecord[] = cron.spec.workflowTemplate
    ? await makeWorkflows(tx, cron, decision.fire, nameBroken)
    : await makeJobs(tx, cron, schedule, decision.fire, nameBroken);
  records.push(...decision.skip.map((x) => ({ at: x.at, outcome: 'Skipped', reason: x.reason, uid: null, job: null })));
  await recordOccurrences(tx, cron, schedule, records);
  const fired = records.filter((r) => r.outcome === 'Fired').map((r) => ({ at: r.at, job: r.job! }));
  return {
    outcome: 'done',
    decision,
    now,
    fired,
    nameTaken: records.filter((r) => r.reason === 'NameTaken').map((r) => r.at),
  };
}

/** Each occurrence's Job: a record per occurrence, fired or (its name taken) skipped. */
async function makeJobs(
  tx: Tx,
  cron: DueCronJob,
  schedule: CronSchedule,
  fire: Date[],
  nameBroken: boolean,
): Promise<OccurrenceRecord[]> {
  const requests = fire.map((at) => occurrenceJob(cron, schedule, at, nameBroken));
  const results = requests.length > 0 ? await submitInTx(tx, requests, null, cron.uid) : [];
  return fire.map((at, i) => {
    const { outcome, job } = results[i]!;
    return outcome === 'created'
      ? { at, outcome: 'Fired', reason: null, uid: job.uid, job: job.name }
      : { at, outcome: 'Skipped', reason: 'NameTaken', uid: null, job: requests[i]!.name };
  });
}

/** Each occurrence's Workflow (and its jobs), as makeJobs. */
async function makeWorkflows(tx: Tx, cron: DueCronJob, fire: Date[], nameBroken: boolean): Promise<OccurrenceRecord[]> {
  const records: OccurrenceRecord[] = [];
  for (const at of fire) {
    const request = occurrenceWorkflow(cron, at, nameBroken);
    const workflow = await insertOccurrenceWorkflow(tx, request, cron.uid);
    records.push(
      workflow
        ? { at, outcome: 'Fired', reason: null, uid: workflow.uid, job: workflow.name }
        : { at, outcome: 'Skipped', reason: 'NameTaken', uid: null, job: request.name },
    );
  }
  return records;
}

interface OccurrenceRecord {
  at: Date;
  outcome: string;
  reason: string | null;
  uid: string | null;
  job: string | null;
}

async function recordOccurrences(
  tx: Tx,
  cron: Pick<DueCronJob, 'uid' | 'namespace' | 'name' | 'version' | 'concurrency_policy'>,
  schedule: CronSchedule,
  records: OccurrenceRecord[],
): Promise<void> {
  if (records.length === 0) return;
  await tx.query(sql('cron/record'), [
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
    cron.concurrency_policy,
  ]);
}

/** Says on the CronJob why its due occurrence could not fire (it stays due: the next pass tries again). */
export async function markBlocked(
  tx: Tx,
  cron: Pick<DueCronJob, 'uid' | 'version'>,
  reason: string,
  message: string,
): Promise<void> {
  await tx.query(sql('cron/block'), [cron.uid, cron.version, reason, message]);
}

/** Finished Jobs past their CronJob's history limits, oldest first (read outside any transaction). */
export async function prunableJobs(db: Db, limit: number): Promise<string[]> {
  return (await db.query<{ uid: string }>(sql('cron/prunable'), [limit])).rows.map((r) => r.uid);
}

export async function pruneJobs(tx: Tx, uids: string[]): Promise<void> {
  await tx.query(sql('cron/prune'), [uids]);
}

/** Closed workflows of CronJobs past their history limits, oldest first (read outside any transaction). */
export async function prunableWorkflows(db: Db, limit: number): Promise<string[]> {
  return (await db.query<{ uid: string }>(sql('cron/prunable_workflows'), [limit])).rows.map((r) => r.uid);
}

export async function pruneWorkflows(tx: Tx, uids: string[]): Promise<void> {
  await tx.query(sql('cron/prune_workflows'), [uids]);
}
