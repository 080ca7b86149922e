// CronJobs: apply (create or edit; one YAML or JSON document), get, list, delete, and a
// CronJob's recent occurrences. Any replica, no leader needed: firing is the leader's.
import { readOffLoop } from '../validation/off-loop.js';
import { pagedList, type PageQuery } from '../list-page.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parsedBody } from '../auth-gate.js';
import { createdIn, onCollection, onObject } from '../route-access.js';
import { rehearseIf } from '../dry-run.js';
import { writeOptionsOf, type WriteAnswer, type WriteOptions } from '../write-options.js';
import type { ApiContext } from '../context.js';
import { HttpError } from '../../errors/http-error.js';
import { applyCronJob, deleteCronJob, getCronJob, listCronJobPage, recentOccurrences } from '../../cron/store.js';
import { presentCronJob } from '../present.js';
import type { CronJob, CronJobRequest } from '../../domain/resources.js';
import { overdueSlackMs } from '../../config.js';

interface CronJobParams {
  namespace: string;
  name: string;
}

const OCCURRENCES_SHOWN = 20;

/** Creates or edits the CronJob a POST /api/v1/cronjobs body holds. */
export async function applyCronJobOf(
  ctx: ApiContext,
  cronJob: CronJobRequest,
  options: WriteOptions,
): Promise<WriteAnswer> {
  const result = await rehearseIf(options.dryRun, ctx.db, (db) => applyCronJob(db, cronJob));
  return { code: result.outcome === 'created' ? 201 : 200, body: presentCronJob(result.cronJob) };
}

/** Deletes a CronJob and, unless `orphan`, its Jobs and workflows. */
export async function removeCronJob(
  ctx: ApiContext,
  namespace: string,
  name: string,
  orphan: boolean,
  options: WriteOptions,
): Promise<CronJob> {
  const row = await rehearseIf(options.dryRun, ctx.db, (db) =>
    deleteCronJob(db, namespace, name, overdueSlackMs(ctx.timings), orphan),
  );
  if (!row) throw notFound(namespace, name);
  return presentCronJob(row);
}

export function cronJobRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const submission = (request: FastifyRequest) => parsedBody(request, readCronJob);
  app.post(
    '/api/v1/cronjobs',
    {
      config: {
        dryRun: true,
        access: async (request) => createdIn('cronjobs', [(await submission(request)).namespace]),
      },
    },
    async (request, reply) => {
      const answer = await applyCronJobOf(ctx, await submission(request), writeOptionsOf(request));
      reply.code(answer.code);
      return answer.body;
    },
  );

  // Pages as GET /api/v1/jobs's: `limit` and `continue` (src/api/list-page.ts).
  const list = pagedList('CronJobList', (namespace, page) => listCronJobPage(ctx.db, namespace, page), presentCronJob);
  app.get<{ Querystring: PageQuery & { namespace?: string } }>(
    '/api/v1/cronjobs',
    { config: { access: onCollection('list', 'cronjobs') } },
    async (request) => list(request.query.namespace || null, request.query),
  );

  app.get<{ Params: { namespace: string }; Querystring: PageQuery }>(
    '/api/v1/namespaces/:namespace/cronjobs',
    { config: { access: onCollection('list', 'cronjobs') } },
    async (request) => list(request.params.namespace, request.query),
  );

  app.get<{ Params: CronJobParams }>(
    '/api/v1/namespaces/:namespace/cronjobs/:name',
    { config: { access: onObject('get', 'cronjobs') } },
    async (request) => {
      const { namespace, name } = request.params;
      const row = await getCronJob(ctx.db, namespace, name);
      if (!row) throw notFound(namespace, name);
      return presentCronJob(row);
    },
  );

  // The most recent occurrences, newest first: fired (with the Job and how late) or skipped (why).
  app.get<{ Params: CronJobParams }>(
    '/api/v1/namespaces/:namespace/cronjobs/:name/occurrences',
    { config: { access: onObject('get', 'cronjobs', 'occurrences') } },
    async (request) => {
      const { namespace, name } = request.params;
      const row = await getCronJob(ctx.db, namespace, name);
      if (!row) throw notFound(namespace, name);
      const occurrences = await recentOccurrences(ctx.db, row.uid, OCCURRENCES_SHOWN);
      return {
        items: occurrences.map((o) => ({
          scheduledTime: o.scheduled_at.toISOString(),
          outcome: o.outcome,
          ...(o.reason ? { reason: o.reason } : {}),
          ...(o.job ? { job: o.job } : {}),
          handledTime: o.fired_at.toISOString(),
          ...(o.started_at ? { startTime: o.started_at.toISOString() } : {}),
        })),
      };
    },
  );

  // propagationPolicy Orphan leaves its Jobs and workflows running; otherwise they go with it.
  app.delete<{ Params: CronJobParams; Querystring: { propagationPolicy?: string } }>(
    '/api/v1/namespaces/:namespace/cronjobs/:name',
    { config: { dryRun: true, access: onObject('delete', 'cronjobs') } },
    async (request) => {
      const orphan = propagationOf(request.query.propagationPolicy) === 'Orphan';
      return removeCronJob(ctx, request.params.namespace, request.params.name, orphan, writeOptionsOf(request));
    },
  );
}

/** A CronJob document as the store takes it. */
/** A CronJob's body, read off the event loop when large (off-loop.ts). */
export function readCronJob(text: string, contentType: string | undefined): Promise<CronJobRequest> {
  return readOffLoop('cronjob', text, contentType);
}

function notFound(namespace: string, name: string): HttpError {
  return new HttpError(404, `cronjob ${namespace}/${name} not found`);
}

/** DeleteOptions.propagationPolicy (Kubernetes): Orphan, Background (the default) or Foreground. */
export function propagationOf(value: string | undefined): 'Orphan' | 'Background' | 'Foreground' {
  if (value === undefined || value === '' || value === 'Background' || value === 'Foreground')
    return (value || 'Background') as 'Background' | 'Foreground';
  if (value === 'Orphan') return 'Orphan';
  throw new HttpError(400, `propagationPolicy: "${value}" is not Orphan, Background or Foreground`);
}
