// Jobs: create (YAML or JSON), get, list, delete, cancel. Any replica, no leader needed.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiContext } from '../context.js';
import { readSubmissionOffLoop } from '../validation/off-loop.js';
import { HttpError } from '../../errors/http-error.js';
import { cancelJob, deleteJob, getJob, listJobs, submitJob, submitJobs } from '../../store/jobs.js';
import { presentJob } from '../present.js';
import { API_VERSION, type JobRequest } from '../../domain/resources.js';

interface JobParams {
  namespace: string;
  name: string;
}

/** Room for a backlog of ten thousand jobs in one request. */
const BATCH_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

async function submitMany(ctx: ApiContext, jobs: JobRequest[], reply: FastifyReply) {
  const result = await submitJobs(ctx.db, jobs);
  if (result.outcome === 'conflict') {
    const { namespace, name } = result.job;
    throw new HttpError(409, `job ${namespace}/${name} already exists with a different spec (jobs are immutable; delete it first); none of the ${jobs.length} jobs was accepted`);
  }
  reply.code(result.results.some((r) => r.outcome === 'created') ? 201 : 200);
  return { apiVersion: API_VERSION, kind: 'JobList', items: result.results.map((r) => presentJob(r.job)) };
}

export function jobRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // One document: that job. Several (`---` documents or a JSON array): all of them in one
  // transaction, all accepted or none, answered with a JobList.
  app.post('/api/v1/jobs', { bodyLimit: BATCH_BODY_LIMIT_BYTES }, async (request, reply) => {
    const { jobs, several } = await readSubmissionOffLoop(String(request.body ?? ''), request.headers['content-type']);
    if (several) return submitMany(ctx, jobs, reply);
    const job = jobs[0]!;
    const result = await submitJob(ctx.db, job);
    if (result.outcome === 'conflict') {
      throw new HttpError(409, `job ${job.namespace}/${job.name} already exists with a different spec (jobs are immutable; delete it first)`);
    }
    reply.code(result.outcome === 'created' ? 201 : 200);
    return presentJob(result.job);
  });

  app.get<{ Querystring: { namespace?: string } }>('/api/v1/jobs', async (request) => {
    const rows = await listJobs(ctx.db, request.query.namespace || null);
    return { apiVersion: API_VERSION, kind: 'JobList', items: rows.map(presentJob) };
  });

  app.get<{ Params: { namespace: string } }>('/api/v1/namespaces/:namespace/jobs', async (request) => {
    const rows = await listJobs(ctx.db, request.params.namespace);
    return { apiVersion: API_VERSION, kind: 'JobList', items: rows.map(presentJob) };
  });

  app.get<{ Params: JobParams }>('/api/v1/namespaces/:namespace/jobs/:name', async (request) => {
    const { namespace, name } = request.params;
    const row = await getJob(ctx.db, namespace, name);
    if (!row) throw notFound(namespace, name);
    return presentJob(row);
  });

  app.delete<{ Params: JobParams }>('/api/v1/namespaces/:namespace/jobs/:name', async (request) => {
    const { namespace, name } = request.params;
    const result = await deleteJob(ctx.db, namespace, name);
    if (result.outcome === 'not-found') throw notFound(namespace, name);
    return presentJob(result.job);
  });

  app.post<{ Params: JobParams }>('/api/v1/namespaces/:namespace/jobs/:name/cancel', async (request) => {
    const { namespace, name } = request.params;
    const result = await cancelJob(ctx.db, namespace, name);
    if (result.outcome === 'not-found') throw notFound(namespace, name);
    if (result.outcome === 'finished') throw new HttpError(409, `job ${namespace}/${name} already finished (${result.job.phase})`);
    return presentJob(result.job);
  });
}

function notFound(namespace: string, name: string): HttpError {
  return new HttpError(404, `job ${namespace}/${name} not found`);
}
