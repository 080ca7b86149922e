// Jobs: create (YAML or JSON), get, list, delete, cancel. Any replica, no leader needed.
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';
import { parseManifests } from '../validation/manifest.js';
import { validateJob } from '../validation/job.js';
import { ValidationError } from '../../errors/validation-error.js';
import { HttpError } from '../../errors/http-error.js';
import { cancelJob, deleteJob, getJob, listJobs, submitJob } from '../../store/jobs.js';
import { presentJob } from '../present.js';
import { API_VERSION } from '../../domain/resources.js';

interface JobParams {
  namespace: string;
  name: string;
}

export function jobRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post('/api/v1/jobs', async (request, reply) => {
    const manifests = parseManifests(String(request.body ?? ''), request.headers['content-type']);
    if (manifests.length !== 1) {
      throw new ValidationError([{ path: '(body)', message: `expected one Job, got ${manifests.length} documents` }]);
    }
    const job = validateJob(manifests[0]!);
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
