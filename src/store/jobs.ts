// Jobs as users see them: submit, read, cancel, delete (any replica, no lease needed).
import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Db, Tx } from './db.js';
import { transaction } from './db.js';
import { sql } from './sql.js';
import type { JobRow } from './rows.js';
import type { JobPhase, JobRequest } from '../domain/resources.js';
import { cutPage, type PageKey } from '../domain/list-pages.js';
import { keyOf } from './pages.js';
import { TERMINAL_PHASES } from '../domain/resources.js';
import { withdrawAssignments } from './assignments.js';
import { admitJobs } from '../fair-share/store.js';
import { IdempotencyKeyReusedError } from '../errors/idempotency-key-reused-error.js';
import { isBroken } from '../testing/broken-guards.js';
import { IdempotencyKeyMismatchError } from '../errors/idempotency-key-mismatch-error.js';
import type { IdempotencyClaim } from '../domain/idempotency.js';

export type SubmitResult = { outcome: 'created' | 'unchanged'; job: JobRow } | { outcome: 'conflict'; job: JobRow };

/**
 * One job. A job without a name of its own (generateName) gets one here; with an idempotency key,
 * a retried request finds the job the first one made (outcome 'unchanged') instead of a second.
 */
export async function submitJob(
  db: Db,
  job: JobRequest,
  idempotencyKey: IdempotencyClaim | null = null,
): Promise<SubmitResult> {
  return transaction(db, async (tx) => {
    const claim = job.generateName ? idempotencyKey : null;
    const earlier = await claimIdempotencyKey(tx, 'Job', job.namespace, claim);
    if (earlier !== null) {
      const row = (await tx.query<JobRow>(sql('jobs/get'), [job.namespace, earlier])).rows[0];
      if (!row) throw new IdempotencyKeyReusedError('Job', claim!.key);
      return { outcome: 'unchanged' as const, job: row };
    }
    const result = (await submitNamed(tx, [job], null))[0]!;
    if (claim !== null) await recordIdempotentName(tx, 'Job', job.namespace, claim, result.job.name);
    return result;
  });
}

/**
 * Takes the caller's Idempotency-Key for an object about to be created (nothing to do without
 * one): the name an earlier request of theirs with the key and the same body made, or null when
 * this is the first (or the key had expired: it is taken over). The key is then held by this
 * transaction, and a concurrent first use waits for it; the caller records the name it creates
 * (recordIdempotentName) before it commits. The same key with another body throws
 * IdempotencyKeyMismatchError. One statement for a first use, two for a retry, as before keys
 * were per caller.
 */
export async function claimIdempotencyKey(
  tx: Tx,
  kind: 'Job' | 'Workflow',
  namespace: string,
  claim: IdempotencyClaim | null,
): Promise<string | null> {
  if (claim === null) return null;
  const { subject, key, bodyHash, ttlMs } = claim;
  if ((await tx.query(sql('idempotency/claim'), [namespace, kind, subject, key, bodyHash, ttlMs])).rowCount === 1)
    return null;
  const earlier = (
    await tx.query<{ name: string; body_hash: string }>(sql('idempotency/get'), [namespace, kind, subject, key])
  ).rows[0]!;
  if (earlier.body_hash !== bodyHash) throw new IdempotencyKeyMismatchError(key);
  return earlier.name;
}

/** The name the object made under a claimed key ended up with, in the claiming transaction. */
export async function recordIdempotentName(
  tx: Tx,
  kind: 'Job' | 'Workflow',
  namespace: string,
  claim: IdempotencyClaim,
  name: string,
): Promise<void> {
  await tx.query(sql('idempotency/set_name'), [namespace, kind, claim.subject, claim.key, name]);
}

/** Forgets at most `limit` expired Idempotency-Keys (the leader's prune pass). */
export async function pruneIdempotencyKeys(tx: Tx, ttlMs: number, limit: number): Promise<number> {
  // Broken on purpose (src/testing/broken-guards.ts, idempotency-prune-age): a key taken over meanwhile is deleted.
  const statement = isBroken('idempotency-prune-age') ? 'idempotency/prune_unchecked' : 'idempotency/prune';
  return (await tx.query(sql(statement), [ttlMs, limit])).rowCount ?? 0;
}

// Kubernetes' alphabet for generated names: no vowels (no words) and no look-alikes.
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Where generated names' suffixes come from: five random characters. Tests replace `next`. */
export const nameSuffixes = {
  next(): string {
    const bytes = randomBytes(5);
    return Array.from(bytes, (b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join('');
  },
};

/** A generated name (generateName + suffix) not in `taken`. */
export function generatedName(prefix: string, taken: ReadonlySet<string>): string {
  for (;;) {
    const name = prefix + nameSuffixes.next();
    if (!taken.has(name)) return name;
  }
}

const NAME_DRAWS = 10;

/**
 * Inserts jobs, naming those with a generateName: names distinct within the batch, and drawn
 * again when the database has the name already (a generated name never means "that job, unchanged").
 */
async function submitNamed(tx: Tx, jobs: readonly JobRequest[], workflowUid: string | null): Promise<SubmitResult[]> {
  const used = new Set(jobs.filter((j) => !j.generateName).map((j) => j.name));
  const named = jobs.map((j) => {
    if (!j.generateName) return j;
    const name = generatedName(j.generateName, used);
    used.add(name);
    return { ...j, name };
  });
  const results = await submitInTx(tx, named, workflowUid);
  for (let draw = 1; ; draw++) {
    const again = named.flatMap((j, i) => (j.generateName && results[i]!.outcome !== 'created' ? [i] : []));
    if (again.length === 0) return results;
    if (draw === NAME_DRAWS)
      throw new Error(`no free name for generateName "${named[again[0]!]!.generateName}" after ${NAME_DRAWS} draws`);
    for (const i of again) {
      used.add(named[i]!.name);
      const name = generatedName(named[i]!.generateName!, used);
      used.add(name);
      named[i] = { ...named[i]!, name };
    }
    const redone = await submitInTx(
      tx,
      again.map((i) => named[i]!),
      workflowUid,
    );
    again.forEach((i, k) => (results[i] = redone[k]!));
  }
}

/**
 * Several jobs in one transaction: all are accepted or none. The first conflict (a name taken
 * by a job with another spec) rolls back the rest and comes back as the result.
 */
export async function submitJobs(
  db: Db,
  jobs: readonly JobRequest[],
): Promise<{ outcome: 'accepted'; results: SubmitResult[] } | { outcome: 'conflict'; job: JobRow }> {
  try {
    return await transaction(db, async (tx) => {
      const results = await submitNamed(tx, jobs, null);
      const conflict = results.find((r) => r.outcome === 'conflict');
      if (conflict) throw new SubmitConflict(conflict.job);
      return { outcome: 'accepted' as const, results };
    });
  } catch (error) {
    if (error instanceof SubmitConflict) return { outcome: 'conflict', job: error.job };
    throw error;
  }
}

class SubmitConflict extends Error {
  constructor(readonly job: JobRow) {
    super(`job ${job.namespace}/${job.name} already exists with a different spec`);
  }
}

/**
 * Inserts the jobs in one statement over arrays (a backlog of thousands is three round trips,
 * not thousands); a name already taken is 'unchanged' when the spec and labels are the same,
 * else 'conflict'. Results are in the jobs' order.
 */
export async function submitInTx(
  tx: Tx,
  jobs: readonly JobRequest[],
  workflowUid: string | null,
  cronJobUid: string | null = null,
): Promise<SubmitResult[]> {
  await admitJobs(tx, jobs);
  const inserted = (
    await tx.query<JobRow>(sql('jobs/insert'), [
      jobs.map(() => randomUUID()),
      jobs.map((j) => j.namespace),
      jobs.map((j) => j.name),
      jobs.map((j) => JSON.stringify(j.labels)),
      jobs.map((j) => JSON.stringify(j.spec)),
      jobs.map((j) => j.cpuMillis),
      jobs.map((j) => j.memoryBytes),
      jobs.map((j) => j.durationMs),
      jobs.map((j) => JSON.stringify(j.nodeSelector)),
      jobs.map((j) => j.maxAttempts),
      jobs.map((j) => j.startAt),
      jobs.map((j) => j.startAfterMs),
      jobs.map((j) => JSON.stringify(j.needs)),
      jobs.map(() => workflowUid),
      jobs.map((j) => j.pathMs),
      jobs.map((j) => j.image),
      jobs.map((j) => j.pool),
      jobs.map((j) => j.retryPolicy),
      jobs.map((j) => j.backoffBaseMs),
      jobs.map((j) => j.backoffCapMs),
      jobs.map((j) => j.queue),
      jobs.map((j) => j.priority),
      jobs.map(() => cronJobUid),
      jobs.map((j) => JSON.stringify(j.annotations ?? {})),
    ])
  ).rows;
  const key = (j: { namespace: string; name: string }) => `${j.namespace}/${j.name}`;
  const created = new Map(inserted.map((row) => [key(row), row]));
  const taken = jobs.filter((j) => !created.has(key(j)));
  const existing = new Map<string, JobRow>();
  if (taken.length > 0) {
    const rows = (
      await tx.query<JobRow>(sql('jobs/get_many'), [taken.map((j) => j.namespace), taken.map((j) => j.name)])
    ).rows;
    for (const row of rows) existing.set(key(row), row);
  }
  return jobs.map((job): SubmitResult => {
    const row = created.get(key(job));
    if (row) return { outcome: 'created', job: row };
    const other = existing.get(key(job))!;
    // jsonb reorders keys, so compare values, not text.
    const same =
      isDeepStrictEqual(other.spec, job.spec) &&
      isDeepStrictEqual(other.labels, job.labels) &&
      isDeepStrictEqual(other.annotations, job.annotations ?? {});
    return { outcome: same ? 'unchanged' : 'conflict', job: other };
  });
}

export async function getJob(db: Db, namespace: string, name: string): Promise<JobRow | undefined> {
  return (await db.query<JobRow>(sql('jobs/get'), [namespace, name])).rows[0];
}

export interface JobFilter {
  /** Every one of these labels, with these values (a label selector of equalities). */
  labels?: Record<string, string>;
  phase?: JobPhase;
}

/** Every job of a namespace (of all when null) that passes the filter, by namespace and name. */
export async function listJobs(db: Db, namespace: string | null, filter: JobFilter = {}): Promise<JobRow[]> {
  return (await db.query<JobRow>(sql('jobs/list'), listParameters(namespace, filter, null, null))).rows;
}

export interface JobPage {
  jobs: JobRow[];
  /** The last job's key when more follow (the next page starts after it); null on the last page. */
  next: PageKey | null;
}

/** At most `limit` jobs of listJobs' list, those after `after` (from the first when null). */
export async function listJobPage(
  db: Db,
  namespace: string | null,
  filter: JobFilter,
  after: PageKey | null,
  limit: number,
): Promise<JobPage> {
  // One more than asked says whether another page follows.
  const rows = (await db.query<JobRow>(sql('jobs/list'), listParameters(namespace, filter, after, limit + 1))).rows;
  const page = cutPage(rows, limit, keyOf);
  return { jobs: page.rows, next: page.next };
}

function listParameters(
  namespace: string | null,
  filter: JobFilter,
  after: PageKey | null,
  limit: number | null,
): unknown[] {
  const labels = filter.labels && Object.keys(filter.labels).length > 0 ? JSON.stringify(filter.labels) : null;
  return [namespace, labels, filter.phase ?? null, after?.namespace ?? null, after?.name ?? null, limit];
}

/**
 * Puts dead letters back to Pending with fresh attempts, recording who asked in the history.
 * Jobs that are not Dead are left alone and not returned.
 */
export async function replayJobs(
  db: Db,
  namespace: string | null,
  filter: { name?: string; labels?: Record<string, string> },
  actor: string | null,
): Promise<JobRow[]> {
  return transaction(db, async (tx) => {
    if (actor) await tx.query(sql('jobs/set_actor'), [actor]);
    const dead =
      filter.name !== undefined
        ? (await tx.query<JobRow>(sql('jobs/lock_by_name'), [namespace, filter.name])).rows.filter(
            (j) => j.phase === 'Dead',
          )
        : (
            await tx.query<JobRow>(
              sql('jobs/list'),
              listParameters(namespace, { labels: filter.labels, phase: 'Dead' }, null, null),
            )
          ).rows;
    if (dead.length === 0) return [];
    const uids = dead.map((j) => j.uid);
    await tx.query(sql('jobs/lock'), [uids]);
    return (await tx.query<JobRow>(sql('jobs/replay'), [uids, `replayed by ${actor ?? 'an unnamed user'}`])).rows;
  });
}

export type UserActionResult =
  | { outcome: 'done'; job: JobRow }
  | { outcome: 'not-found' }
  | { outcome: 'finished'; job: JobRow }
  | { outcome: 'owned'; workflow: string };

/** Cancels a job that has not finished; its node is told through its watch stream. */
export async function cancelJob(
  db: Db,
  namespace: string,
  name: string,
  overdueSlackMs: number,
): Promise<UserActionResult> {
  return transaction(db, async (tx) => {
    const locked = (await tx.query<JobRow>(sql('jobs/lock_by_name'), [namespace, name])).rows[0];
    if (!locked) return { outcome: 'not-found' };
    if (TERMINAL_PHASES.includes(locked.phase)) {
      return { outcome: 'finished', job: (await tx.query<JobRow>(sql('jobs/get'), [namespace, name])).rows[0]! };
    }
    await withdrawAssignments(tx, locked.assignment_id ? [locked.assignment_id] : [], overdueSlackMs);
    const job = (await tx.query<JobRow>(sql('jobs/cancel'), [[locked.uid]])).rows[0]!;
    return { outcome: 'done', job };
  });
}

/** Deletes a job (cancelling it first if it runs), unless a workflow owns it. Its history stays. */
export async function deleteJob(
  db: Db,
  namespace: string,
  name: string,
  overdueSlackMs: number,
): Promise<UserActionResult> {
  return transaction(db, async (tx) => {
    const locked = (await tx.query<JobRow>(sql('jobs/lock_by_name'), [namespace, name])).rows[0];
    if (!locked) return { outcome: 'not-found' };
    // A workflow's job goes with its workflow: deleted alone, its dependents would wait on nothing.
    if (locked.workflow_uid) return { outcome: 'owned', workflow: locked.labels['fencer.dev/workflow'] ?? '?' };
    if (!TERMINAL_PHASES.includes(locked.phase))
      await withdrawAssignments(tx, locked.assignment_id ? [locked.assignment_id] : [], overdueSlackMs);
    const job = (await tx.query<JobRow>(sql('jobs/delete'), [locked.uid])).rows[0]!;
    return { outcome: 'done', job };
  });
}

/** Jobs that can still change, plus workflows still running: zero once everything has settled. */
export async function unfinishedCount(db: Db): Promise<number> {
  const row = (await db.query<{ jobs: number; workflows: number }>(sql('jobs/unfinished_count'))).rows[0]!;
  return row.jobs + row.workflows;
}

/**
 * A Job's or Workflow's labels and annotations, the metadata that may change after create (as a
 * pod's may), at `expectedVersion` (its watch resourceVersion) when given. False: the object is
 * gone or changed since.
 */
export async function setMetadata(
  db: Db,
  kind: 'Job' | 'Workflow',
  namespace: string,
  name: string,
  metadata: { labels: Record<string, string>; annotations: Record<string, string> },
  expectedVersion: number | null,
): Promise<boolean> {
  const statement = kind === 'Job' ? 'jobs/set_metadata' : 'workflows/set_metadata';
  const result = await db.query(sql(statement), [
    namespace,
    name,
    JSON.stringify(metadata.labels),
    JSON.stringify(metadata.annotations),
    expectedVersion,
  ]);
  return (result.rowCount ?? 0) > 0;
}

/** One row of a job's history (migration 0001's columns), for its events. */
export interface JobHistoryRow {
  at: Date;
  entity: 'job' | 'assignment';
  assignment: string | null;
  node: string | null;
  epoch: number | null;
  from_state: string | null;
  to_state: string;
  reason: string | null;
  replica: string | null;
  actor: string | null;
}

/** The latest `limit` history rows of a job and its assignments, oldest first. */
export async function jobHistory(db: Db, namespace: string, name: string, limit: number): Promise<JobHistoryRow[]> {
  return (await db.query<JobHistoryRow>(sql('jobs/events'), [namespace, name, limit])).rows;
}
