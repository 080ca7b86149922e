// Jobs: create (YAML or JSON), get, list (a page at a time), delete, cancel, replay. Any replica, no leader needed.
import { overdueSlackMs } from '../../config.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiContext } from '../context.js';
import { readSubmissionOffLoop } from '../validation/off-loop.js';
import type { Submission } from '../validation/submission.js';
import { parsedBody } from '../auth-gate.js';
import { createdIn, onCollection, onObject } from '../route-access.js';
import { HttpError } from '../../errors/http-error.js';
import {
  cancelJob,
  deleteJob,
  getJob,
  jobHistory,
  listJobPage,
  replayJobs,
  submitJob,
  submitJobs,
} from '../../store/jobs.js';
import { presentJob, presentJobEvent } from '../present.js';
import { jobFilterOf } from '../job-filter.js';
import { listMetadata, pageRequestOf } from '../list-page.js';

/** The latest events a job's events list shows. */
const EVENTS_SHOWN = 100;
import { API_VERSION, type Job, type JobRequest } from '../../domain/resources.js';
import { actorOf } from '../request-headers.js';
import { rehearseIf, writeOrRehearse } from '../dry-run.js';
import { writeOptionsOf, type WriteOptions, type WriteAnswer } from '../write-options.js';

interface JobParams {
  namespace: string;
  name: string;
}

interface ListQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: string;
  continue?: string;
}

/** Room for a backlog of ten thousand jobs in one request. */
const BATCH_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

async function submitMany(ctx: ApiContext, jobs: JobRequest[], options: WriteOptions): Promise<WriteAnswer> {
  await ctx.backlog.admit(jobs.length);
  const result = await rehearseIf(options.dryRun, ctx.db, (db) => submitJobs(db, jobs));
  if (result.outcome === 'conflict') {
    const { namespace, name } = result.job;
    throw new HttpError(
      409,
      `job ${namespace}/${name} already exists with a different spec (jobs are immutable; delete it first); none of the ${jobs.length} jobs was accepted`,
    );
  }
  const created = result.results.filter((r) => r.outcome === 'created').length;
  if (!options.dryRun) ctx.backlog.accepted(created);
  return {
    code: created > 0 ? 201 : 200,
    body: { apiVersion: API_VERSION, kind: 'JobList', items: result.results.map((r) => presentJob(r.job)) },
  };
}

/**
 * Creates what a POST /api/v1/jobs body holds. One document: that job. Several (`---` documents
 * or a JSON array): all of them in one transaction, all accepted or none, answered with a JobList.
 */
export async function createJobs(ctx: ApiContext, submission: Submission, options: WriteOptions): Promise<WriteAnswer> {
  const { jobs, several } = submission;
  if (several) return submitMany(ctx, jobs, options);
  const job = jobs[0]!;
  const key = options.idempotencyKey();
  await ctx.backlog.admit(1);
  const result = await rehearseIf(options.dryRun, ctx.db, (db) => submitJob(db, job, key));
  if (result.outcome === 'conflict') {
    throw new HttpError(
      409,
      `job ${job.namespace}/${job.name} already exists with a different spec (jobs are immutable; delete it first)`,
    );
  }
  if (result.outcome === 'created' && !options.dryRun) ctx.backlog.accepted(1);
  return { code: result.outcome === 'created' ? 201 : 200, body: presentJob(result.job) };
}

/** Deletes a job (stopping its run); a workflow's job goes only with its workflow (409). */
export async function removeJob(ctx: ApiContext, namespace: string, name: string, options: WriteOptions): Promise<Job> {
  const result = await rehearseIf(options.dryRun, ctx.db, (db) =>
    deleteJob(db, namespace, name, overdueSlackMs(ctx.timings)),
  );
  if (result.outcome === 'not-found') throw notFound(namespace, name);
  if (result.outcome === 'owned')
    throw new HttpError(
      409,
      `job ${namespace}/${name} belongs to workflow ${result.workflow}: delete the workflow (fencer delete workflow ${result.workflow})`,
    );
  return presentJob(result.job);
}

export function jobRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const submission = (request: FastifyRequest) => parsedBody(request, readSubmissionOffLoop);
  app.post(
    '/api/v1/jobs',
    {
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      config: {
        dryRun: true,
        access: async (request) =>
          createdIn(
            'jobs',
            (await submission(request)).jobs.map((j) => j.namespace),
          ),
      },
    },
    async (request, reply) => {
      const answer = await createJobs(ctx, await submission(request), writeOptionsOf(request));
      reply.code(answer.code);
      return answer.body;
    },
  );

  // A page at a time (list-page.ts): `limit` (500 when none, at most 1000) and the `continue` of
  // the page before; metadata.continue, when there, asks for the next.
  app.get<{ Querystring: ListQuery }>(
    '/api/v1/jobs',
    { config: { access: onCollection('list', 'jobs') } },
    async (request) => listPage(ctx, request.query.namespace || null, request.query),
  );

  app.get<{ Params: { namespace: string }; Querystring: ListQuery }>(
    '/api/v1/namespaces/:namespace/jobs',
    { config: { access: onCollection('list', 'jobs') } },
    async (request) => listPage(ctx, request.params.namespace, request.query),
  );

  app.get<{ Params: JobParams }>(
    '/api/v1/namespaces/:namespace/jobs/:name',
    { config: { access: onObject('get', 'jobs') } },
    async (request) => {
      const { namespace, name } = request.params;
      const row = await getJob(ctx.db, namespace, name);
      if (!row) throw notFound(namespace, name);
      return presentJob(row);
    },
  );

  // Its events, as kubectl describe shows a pod's: each change of it and its assignments, from the history.
  app.get<{ Params: JobParams }>(
    '/api/v1/namespaces/:namespace/jobs/:name/events',
    { config: { access: onObject('get', 'jobs', 'events') } },
    async (request) => {
      const { namespace, name } = request.params;
      if (!(await getJob(ctx.db, namespace, name))) throw notFound(namespace, name);
      const rows = await jobHistory(ctx.db, namespace, name, EVENTS_SHOWN);
      return { apiVersion: API_VERSION, kind: 'JobEventList', items: rows.map(presentJobEvent) };
    },
  );

  app.delete<{ Params: JobParams }>(
    '/api/v1/namespaces/:namespace/jobs/:name',
    { config: { dryRun: true, access: onObject('delete', 'jobs') } },
    async (request) => removeJob(ctx, request.params.namespace, request.params.name, writeOptionsOf(request)),
  );

  app.post<{ Params: JobParams }>(
    '/api/v1/namespaces/:namespace/jobs/:name/cancel',
    { config: { dryRun: true, access: onObject('create', 'jobs', 'cancel') } },
    async (request) => {
      const { namespace, name } = request.params;
      const result = await writeOrRehearse(request, ctx.db, (db) =>
        cancelJob(db, namespace, name, overdueSlackMs(ctx.timings)),
      );
      if (result.outcome === 'not-found') throw notFound(namespace, name);
      if (result.outcome === 'finished')
        throw new HttpError(409, `job ${namespace}/${name} already finished (${result.job.phase})`);
      if (result.outcome === 'owned')
        throw new HttpError(409, `job ${namespace}/${name} belongs to workflow ${result.workflow}`);
      return presentJob(result.job);
    },
  );

  // A dead letter back to Pending with fresh attempts; the history records who asked.
  app.post<{ Params: JobParams }>(
    '/api/v1/namespaces/:namespace/jobs/:name/replay',
    { config: { dryRun: true, access: onObject('create', 'jobs', 'replay') } },
    async (request) => {
      const { namespace, name } = request.params;
      const replayed = await writeOrRehearse(request, ctx.db, (db) =>
        replayJobs(db, namespace, { name }, actorOf(request)),
      );
      if (replayed.length === 0) {
        const row = await getJob(ctx.db, namespace, name);
        if (!row) throw notFound(namespace, name);
        const workflow = row.labels['fencer.dev/workflow'];
        if (row.phase === 'Dead' && row.workflow_uid) {
          throw new HttpError(
            409,
            `job ${namespace}/${name} belongs to workflow ${workflow}: retry the workflow (fencer retry workflow ${workflow}), which also runs what it skipped`,
          );
        }
        throw new HttpError(409, `job ${namespace}/${name} is ${row.phase}, not Dead: only dead letters are replayed`);
      }
      return presentJob(replayed[0]!);
    },
  );

  // Every dead letter of a namespace (all namespaces without one: the cluster scope) matching a label selector.
  app.post<{ Querystring: ListQuery }>(
    '/api/v1/jobs/replay',
    { config: { dryRun: true, access: onCollection('create', 'jobs', 'replay') } },
    async (request: FastifyRequest<{ Querystring: ListQuery }>) => {
      const filter = { labels: jobFilterOf(request.query).labels };
      const replayed = await writeOrRehearse(request, ctx.db, (db) =>
        replayJobs(db, request.query.namespace || null, filter, actorOf(request)),
      );
      return { apiVersion: API_VERSION, kind: 'JobList', items: replayed.map(presentJob) };
    },
  );
}

async function listPage(ctx: ApiContext, namespace: string | null, query: ListQuery) {
  const filter = jobFilterOf(query);
  const { after, limit } = pageRequestOf(query, namespace);
  const page = await listJobPage(ctx.db, namespace, filter, after, limit);
  return {
    apiVersion: API_VERSION,
    kind: 'JobList',
    metadata: listMetadata(page.next),
    items: page.jobs.map(presentJob),
  };
}

function notFound(namespace: string, name: string): HttpError {
  return new HttpError(404, `job ${namespace}/${name} not found`);
}
