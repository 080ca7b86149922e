// Workflows as users see them: submit (the workflow and all its jobs in one transaction), read,
// cancel, retry, delete (any replica, no lease needed). What happens to waiting jobs as their
// needs end, and when a workflow closes, is the leader's (./controller.ts).
import { cutPage, type PageRequest, type RowsPage } from '../domain/list-pages.js';
import { pageParameters } from '../store/pages.js';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Db, Tx } from '../store/db.js';
import { transaction } from '../store/db.js';
import { sql } from '../store/sql.js';
import type { JobRow, WorkflowRow } from '../store/rows.js';
import type { WorkflowRequest } from '../domain/resources.js';
import { TERMINAL_PHASES } from '../domain/resources.js';
import { withdrawAssignments } from '../store/assignments.js';
import { IdempotencyKeyReusedError } from '../errors/idempotency-key-reused-error.js';
import { claimIdempotencyKey, generatedName, recordIdempotentName, submitInTx } from '../store/jobs.js';
import type { IdempotencyClaim } from '../domain/idempotency.js';
import { nameWorkflow } from '../domain/workflow-request.js';

export type WorkflowSubmitResult =
  { outcome: 'created' | 'unchanged'; workflow: WorkflowRow; jobs: JobRow[] } | { outcome: 'conflict'; what: string };

/**
 * A workflow and its jobs, all or nothing. A workflow named by generateName gets its name here,
 * and its jobs theirs from it (`<workflow>-<job>`); with an idempotency key a retried request
 * finds the workflow the first one made.
 */
export async function submitWorkflow(
  db: Db,
  request: WorkflowRequest,
  idempotencyKey: IdempotencyClaim | null = null,
): Promise<WorkflowSubmitResult> {
  try {
    return await transaction(db, async (tx) => {
      const claim = request.generateName ? idempotencyKey : null;
      const earlier = await claimIdempotencyKey(tx, 'Workflow', request.namespace, claim);
      if (earlier !== null) {
        const existing = await readWorkflow(tx, request.namespace, earlier);
        if (!existing) throw new IdempotencyKeyReusedError('Workflow', claim!.key);
        return { outcome: 'unchanged' as const, ...existing };
      }
      const uid = randomUUID();
      const insert = (name: string) =>
        tx.query<WorkflowRow>(sql('workflows/insert'), [
          uid,
          request.namespace,
          name,
          JSON.stringify(request.labels),
          JSON.stringify(request.spec),
          null,
          JSON.stringify(request.annotations ?? {}),
        ]);
      let name = request.name;
      let inserted: WorkflowRow | undefined;
      if (request.generateName) {
        // A generated name already taken is drawn again: it never means "that workflow, unchanged".
        const taken = new Set<string>();
        for (let draw = 0; !inserted && draw < 10; draw++) {
          name = generatedName(request.generateName, taken);
          taken.add(name);
          inserted = (await insert(name)).rows[0];
        }
        if (!inserted) throw new Error(`no free name for generateName "${request.generateName}"`);
        if (claim !== null) await recordIdempotentName(tx, 'Workflow', request.namespace, claim, name);
      } else {
        inserted = (await insert(name)).rows[0];
      }
      if (!inserted) {
        const existing = (await readWorkflow(tx, request.namespace, name))!;
        const same =
          isDeepStrictEqual(existing.workflow.spec, request.spec) &&
          isDeepStrictEqual(existing.workflow.labels, request.labels) &&
          isDeepStrictEqual(existing.workflow.annotations, request.annotations ?? {});
        if (same) return { outcome: 'unchanged' as const, ...existing };
        return {
          outcome: 'conflict' as const,
          what: `workflow ${request.namespace}/${name} already exists with a different spec (workflows are immutable; delete it first)`,
        };
      }
      // A generated workflow name is known only now: its jobs' names and needs follow from it.
      const jobs = request.generateName ? nameWorkflow(request, name).jobs : request.jobs;
      const results = await submitInTx(tx, jobs, uid);
      const taken = results.find((r) => r.outcome !== 'created');
      if (taken)
        throw new WorkflowConflict(
          `job ${taken.job.namespace}/${taken.job.name} already exists: a workflow's job names must be free; nothing was accepted`,
        );
      return { outcome: 'created' as const, workflow: inserted, jobs: results.map((r) => r.job) };
    });
  } catch (error) {
    if (error instanceof WorkflowConflict) return { outcome: 'conflict', what: error.message };
    throw error;
  }
}

class WorkflowConflict extends Error {}

/**
 * A CronJob occurrence's workflow and its jobs, inside the leader's transaction: undefined when
 * the name (or one of its jobs' names) is taken. Throws what admitting its jobs throws.
 */
export async function insertOccurrenceWorkflow(
  tx: Tx,
  request: WorkflowRequest,
  cronJobUid: string,
): Promise<WorkflowRow | undefined> {
  const uid = randomUUID();
  await tx.query(sql('workflows/occurrence_savepoint'));
  const inserted = (
    await tx.query<WorkflowRow>(sql('workflows/insert'), [
      uid,
      request.namespace,
      request.name,
      JSON.stringify(request.labels),
      JSON.stringify(request.spec),
      cronJobUid,
      JSON.stringify(request.annotations ?? {}),
    ])
  ).rows[0];
  const results = inserted ? await submitInTx(tx, request.jobs, uid, cronJobUid) : [];
  if (!inserted || results.some((r) => r.outcome !== 'created')) {
    await tx.query(sql('workflows/occurrence_rollback'));
    return undefined;
  }
  return inserted;
}

async function readWorkflow(
  db: Db | Tx,
  namespace: string,
  name: string,
): Promise<{ workflow: WorkflowRow; jobs: JobRow[] } | undefined> {
  const workflow = (await db.query<WorkflowRow>(sql('workflows/get'), [namespace, name])).rows[0];
  if (!workflow) return undefined;
  const jobs = (await db.query<JobRow>(sql('workflows/jobs'), [[workflow.uid]])).rows;
  return { workflow, jobs };
}

export async function getWorkflow(
  db: Db,
  namespace: string,
  name: string,
): Promise<{ workflow: WorkflowRow; jobs: JobRow[] } | undefined> {
  return readWorkflow(db, namespace, name);
}

/** Every workflow of a namespace (of all when null) with its jobs, by namespace and name. */
export async function listWorkflows(
  db: Db,
  namespace: string | null,
): Promise<Array<{ workflow: WorkflowRow; jobs: JobRow[] }>> {
  return withJobs(db, (await db.query<WorkflowRow>(sql('workflows/list'), [namespace, ...pageParameters(null)])).rows);
}

/** A page of listWorkflows' list; the jobs are read for the page's workflows only. */
export async function listWorkflowPage(
  db: Db,
  namespace: string | null,
  page: PageRequest,
): Promise<RowsPage<{ workflow: WorkflowRow; jobs: JobRow[] }>> {
  const rows = (await db.query<WorkflowRow>(sql('workflows/list'), [namespace, ...pageParameters(page)])).rows;
  const cut = cutPage(rows, page.limit, (w) => ({ namespace: w.namespace, name: w.name }));
  return { rows: await withJobs(db, cut.rows), next: cut.next };
}

async function withJobs(db: Db, workflows: WorkflowRow[]): Promise<Array<{ workflow: WorkflowRow; jobs: JobRow[] }>> {
  if (workflows.length === 0) return [];
  const jobs = (await db.query<JobRow>(sql('workflows/jobs'), [workflows.map((w) => w.uid)])).rows;
  const byWorkflow = new Map<string, JobRow[]>(workflows.map((w) => [w.uid, []]));
  for (const job of jobs) byWorkflow.get(job.workflow_uid!)?.push(job);
  return workflows.map((workflow) => ({ workflow, jobs: byWorkflow.get(workflow.uid)! }));
}

export type WorkflowActionResult =
  | { outcome: 'done'; workflow: WorkflowRow; jobs: JobRow[] }
  | { outcome: 'not-found' }
  | { outcome: 'not-allowed'; workflow: WorkflowRow; why: string };

/** Cancels every unfinished job of a workflow (its node stops a running one); it closes Cancelled. */
export async function cancelWorkflow(
  db: Db,
  namespace: string,
  name: string,
  actor: string | null,
  overdueSlackMs: number,
): Promise<WorkflowActionResult> {
  return transaction(db, async (tx) => {
    const workflow = await lockWorkflow(tx, namespace, name, actor);
    if (!workflow) return { outcome: 'not-found' };
    if (workflow.phase !== 'Running')
      return { outcome: 'not-allowed', workflow, why: `already finished (${workflow.phase})` };
    const jobs = (
      await tx.query<{ uid: string; phase: string; assignment_id: string | null }>(sql('workflows/lock_jobs'), [
        workflow.uid,
      ])
    ).rows;
    const open = jobs.filter((j) => !TERMINAL_PHASES.includes(j.phase as never));
    await withdrawAssignments(
      tx,
      open.flatMap((j) => (j.assignment_id ? [j.assignment_id] : [])),
      overdueSlackMs,
    );
    await tx.query(sql('jobs/cancel'), [open.map((j) => j.uid)]);
    await tx.query(sql('workflows/mark_cancelled'), [workflow.uid]);
    return { outcome: 'done', ...(await readWorkflow(tx, namespace, name))! };
  });
}

/**
 * Runs a finished workflow again from the jobs that did not succeed; succeeded jobs stay done.
 * `overdueSlackMs`: how long past its duration a cancelled run may still be running on a node
 * that has not heard of the cancel (config.ts, overdueSlackMs); its job is not due before.
 */
export async function retryWorkflow(
  db: Db,
  namespace: string,
  name: string,
  actor: string | null,
  overdueSlackMs: number,
): Promise<WorkflowActionResult> {
  return transaction(db, async (tx) => {
    const workflow = await lockWorkflow(tx, namespace, name, actor);
    if (!workflow) return { outcome: 'not-found' };
    if (workflow.phase === 'Running')
      return { outcome: 'not-allowed', workflow, why: 'still running (cancel it first, or wait for it to finish)' };
    if (workflow.phase === 'Succeeded')
      return { outcome: 'not-allowed', workflow, why: 'it succeeded: nothing to retry' };
    await tx.query(sql('workflows/lock_jobs'), [workflow.uid]);
    await tx.query(sql('workflows/retry'), [workflow.uid, overdueSlackMs]);
    await tx.query(sql('workflows/reopen'), [workflow.uid]);
    return { outcome: 'done', ...(await readWorkflow(tx, namespace, name))! };
  });
}

/** Deletes a workflow and its jobs (stopping those that run). Their history stays. */
export async function deleteWorkflow(
  db: Db,
  namespace: string,
  name: string,
  actor: string | null,
  overdueSlackMs: number,
): Promise<WorkflowActionResult> {
  return transaction(db, async (tx) => {
    const workflow = await lockWorkflow(tx, namespace, name, actor);
    if (!workflow) return { outcome: 'not-found' };
    const before = (await readWorkflow(tx, namespace, name))!;
    const jobs = (
      await tx.query<{ uid: string; phase: string; assignment_id: string | null }>(sql('workflows/lock_jobs'), [
        workflow.uid,
      ])
    ).rows;
    const open = jobs.filter((j) => !TERMINAL_PHASES.includes(j.phase as never));
    await withdrawAssignments(
      tx,
      open.flatMap((j) => (j.assignment_id ? [j.assignment_id] : [])),
      overdueSlackMs,
    );
    await tx.query(sql('workflows/delete_jobs'), [workflow.uid]);
    await tx.query(sql('workflows/delete'), [workflow.uid]);
    return { outcome: 'done', ...before };
  });
}

async function lockWorkflow(
  tx: Tx,
  namespace: string,
  name: string,
  actor: string | null,
): Promise<WorkflowRow | undefined> {
  if (actor) await tx.query(sql('jobs/set_actor'), [actor]);
  return (await tx.query<WorkflowRow>(sql('workflows/lock_by_name'), [namespace, name])).rows[0];
}

// The leader's side: called by the workflow controller inside its fenced transaction. Each
// statement decides from what it reads itself and changes only jobs still waiting.

/** Releases waiting jobs whose needs all succeeded (workflows/release.sql); how many. */
export async function releaseReadyJobs(tx: Tx, limit: number): Promise<number> {
  return (await tx.query(sql('workflows/release'), [limit])).rowCount ?? 0;
}

/** Skips waiting jobs with a need that did not succeed (workflows/skip.sql); how many. */
export async function skipBlockedJobs(tx: Tx, limit: number): Promise<number> {
  return (await tx.query(sql('workflows/skip'), [limit])).rowCount ?? 0;
}

export async function closeSettledWorkflows(
  tx: Tx,
  limit: number,
): Promise<Array<{ uid: string; namespace: string; name: string; phase: string }>> {
  return (
    await tx.query<{ uid: string; namespace: string; name: string; phase: string }>(sql('workflows/close'), [limit])
  ).rows;
}
