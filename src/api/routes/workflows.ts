// Workflows: create (one YAML or JSON document: the workflow and all its jobs, or nothing), get,
// list, cancel, retry, delete. Any replica, no leader needed.
import { readOffLoop } from '../validation/off-loop.js';
import { pagedList, type PageQuery } from '../list-page.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parsedBody } from '../auth-gate.js';
import { createdIn, onCollection, onObject } from '../route-access.js';
import { rehearseIf, writeOrRehearse } from '../dry-run.js';
import { writeOptionsOf, type WriteAnswer, type WriteOptions } from '../write-options.js';
import type { ApiContext } from '../context.js';
import { HttpError } from '../../errors/http-error.js';
import type { readWorkflowSubmission } from '../validation/workflow.js';
import {
  cancelWorkflow,
  deleteWorkflow,
  getWorkflow,
  listWorkflowPage,
  retryWorkflow,
  submitWorkflow,
  type WorkflowActionResult,
} from '../../workflows/store.js';
import { presentWorkflow } from '../present.js';
import type { Workflow } from '../../domain/resources.js';
import { overdueSlackMs } from '../../config.js';
import { actorOf } from '../request-headers.js';

interface WorkflowParams {
  namespace: string;
  name: string;
}

/** Creates the workflow a POST /api/v1/workflows body holds, with all its jobs, or nothing. */
export async function createWorkflow(
  ctx: ApiContext,
  workflow: WorkflowSubmission,
  options: WriteOptions,
): Promise<WriteAnswer> {
  const key = options.idempotencyKey();
  await ctx.backlog.admit(workflow.jobs.length);
  const result = await rehearseIf(options.dryRun, ctx.db, (db) => submitWorkflow(db, workflow, key));
  if (result.outcome === 'created' && !options.dryRun) ctx.backlog.accepted(workflow.jobs.length);
  if (result.outcome === 'conflict') throw new HttpError(409, result.what);
  return { code: result.outcome === 'created' ? 201 : 200, body: presentWorkflow(result.workflow, result.jobs) };
}

/** Deletes a workflow and its jobs (stopping those that run). */
export async function removeWorkflow(
  ctx: ApiContext,
  namespace: string,
  name: string,
  options: WriteOptions,
): Promise<Workflow> {
  return answer(
    await rehearseIf(options.dryRun, ctx.db, (db) =>
      deleteWorkflow(db, namespace, name, options.actor, overdueSlackMs(ctx.timings)),
    ),
    namespace,
    name,
  );
}

export function workflowRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const submission = (request: FastifyRequest) => parsedBody(request, readWorkflow);
  app.post(
    '/api/v1/workflows',
    {
      config: {
        dryRun: true,
        access: async (request) => createdIn('workflows', [(await submission(request)).namespace]),
      },
    },
    async (request, reply) => {
      const answer = await createWorkflow(ctx, await submission(request), writeOptionsOf(request));
      reply.code(answer.code);
      return answer.body;
    },
  );

  // Pages as GET /api/v1/jobs's: `limit` and `continue` (src/api/list-page.ts).
  const list = pagedList(
    'WorkflowList',
    (namespace, page) => listWorkflowPage(ctx.db, namespace, page),
    (w) => presentWorkflow(w.workflow, w.jobs),
  );
  app.get<{ Querystring: PageQuery & { namespace?: string } }>(
    '/api/v1/workflows',
    { config: { access: onCollection('list', 'workflows') } },
    async (request) => list(request.query.namespace || null, request.query),
  );

  app.get<{ Params: { namespace: string }; Querystring: PageQuery }>(
    '/api/v1/namespaces/:namespace/workflows',
    { config: { access: onCollection('list', 'workflows') } },
    async (request) => list(request.params.namespace, request.query),
  );

  app.get<{ Params: WorkflowParams }>(
    '/api/v1/namespaces/:namespace/workflows/:name',
    { config: { access: onObject('get', 'workflows') } },
    async (request) => {
      const { namespace, name } = request.params;
      const found = await getWorkflow(ctx.db, namespace, name);
      if (!found) throw notFound(namespace, name);
      return presentWorkflow(found.workflow, found.jobs);
    },
  );

  app.delete<{ Params: WorkflowParams }>(
    '/api/v1/namespaces/:namespace/workflows/:name',
    { config: { dryRun: true, access: onObject('delete', 'workflows') } },
    async (request) => removeWorkflow(ctx, request.params.namespace, request.params.name, writeOptionsOf(request)),
  );

  app.post<{ Params: WorkflowParams }>(
    '/api/v1/namespaces/:namespace/workflows/:name/cancel',
    { config: { dryRun: true, access: onObject('create', 'workflows', 'cancel') } },
    async (request) => {
      const { namespace, name } = request.params;
      return answer(
        await writeOrRehearse(request, ctx.db, (db) =>
          cancelWorkflow(db, namespace, name, actorOf(request), overdueSlackMs(ctx.timings)),
        ),
        namespace,
        name,
      );
    },
  );

  // Runs a finished workflow again from its failed jobs; succeeded jobs are not run again.
  app.post<{ Params: WorkflowParams }>(
    '/api/v1/namespaces/:namespace/workflows/:name/retry',
    { config: { dryRun: true, access: onObject('create', 'workflows', 'retry') } },
    async (request) => {
      const { namespace, name } = request.params;
      return answer(
        await writeOrRehearse(request, ctx.db, (db) =>
          retryWorkflow(db, namespace, name, actorOf(request), overdueSlackMs(ctx.timings)),
        ),
        namespace,
        name,
      );
    },
  );
}

/** A workflow document as the store takes it. */
export type WorkflowSubmission = ReturnType<typeof readWorkflowSubmission>;

/** A workflow's body, read off the event loop when large (off-loop.ts). */
export function readWorkflow(text: string, contentType: string | undefined): Promise<WorkflowSubmission> {
  return readOffLoop('workflow', text, contentType);
}

function answer(result: WorkflowActionResult, namespace: string, name: string) {
  if (result.outcome === 'not-found') throw notFound(namespace, name);
  if (result.outcome === 'not-allowed') throw new HttpError(409, `workflow ${namespace}/${name}: ${result.why}`);
  return presentWorkflow(result.workflow, result.jobs);
}

function notFound(namespace: string, name: string): HttpError {
  return new HttpError(404, `workflow ${namespace}/${name} not found`);
}
