// Queues and ResourceQuotas: apply (create or change; one YAML or JSON document), get, list,
// delete; and a namespace's use against its limits. Any replica, no leader needed.
import { readOffLoop } from '../validation/off-loop.js';
import { pagedList, type PageQuery } from '../list-page.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parsedBody, type Access } from '../auth-gate.js';
import { createdIn, onCollection, onObject } from '../route-access.js';
import { rehearseIf } from '../dry-run.js';
import { writeOptionsOf, type WriteAnswer, type WriteOptions } from '../write-options.js';
import type { ApiContext } from '../context.js';
import { HttpError } from '../../errors/http-error.js';
import {
  applyQueue,
  applyQuota,
  deleteQueue,
  deleteQuota,
  getQueue,
  listQueuePage,
  listQueues,
  listQuotaPage,
  listQuotas,
  namespaceUsage,
} from '../../fair-share/store.js';
import { presentNamespace, presentQueue, presentResourceQuota } from '../present.js';
import { API_VERSION, type QueueRequest, type ResourceQuotaRequest } from '../../domain/resources.js';
import type { NamespaceResource } from '../../domain/namespace.js';

/** The namespace every object without one is in, and which always exists. */
const DEFAULT_NAMESPACE = 'default';

interface ObjectParams {
  namespace: string;
  name: string;
}

/** Creates or changes the Queue a POST /api/v1/queues body holds. */
export async function applyQueueOf(ctx: ApiContext, queue: QueueRequest, options: WriteOptions): Promise<WriteAnswer> {
  const result = await rehearseIf(options.dryRun, ctx.db, (db) => applyQueue(db, queue));
  return { code: result.outcome === 'created' ? 201 : 200, body: presentQueue(result.queue) };
}

/** Deletes a queue (409 while it has unfinished jobs, and for `default`). */
export async function removeQueue(
  ctx: ApiContext,
  namespace: string,
  name: string,
  options: WriteOptions,
): Promise<DeletedStatus> {
  const result = await rehearseIf(options.dryRun, ctx.db, (db) => deleteQueue(db, namespace, name));
  if (result.outcome === 'not-found') throw notFound('queue', namespace, name);
  if (result.outcome === 'not-allowed')
    throw new HttpError(409, `queue ${namespace}/${name} cannot be deleted: ${result.why}`);
  return deleted('queues', namespace, name);
}

/** Creates or changes the ResourceQuota a POST /api/v1/resourcequotas body holds (one per namespace). */
export async function applyQuotaOf(
  ctx: ApiContext,
  quota: ResourceQuotaRequest,
  options: WriteOptions,
): Promise<WriteAnswer> {
  const result = await rehearseIf(options.dryRun, ctx.db, (db) => applyQuota(db, quota));
  if (result.outcome === 'conflict') {
    throw new HttpError(
      409,
      `namespace ${quota.namespace} already has ResourceQuota ${result.quota.name} (one per namespace): ` +
        `apply the change to ${result.quota.name}, or delete it first`,
    );
  }
  return { code: result.outcome === 'created' ? 201 : 200, body: presentResourceQuota(result.quota) };
}

/** Deletes a namespace's ResourceQuota. */
export async function removeQuota(
  ctx: ApiContext,
  namespace: string,
  name: string,
  options: WriteOptions,
): Promise<DeletedStatus> {
  if (!(await rehearseIf(options.dryRun, ctx.db, (db) => deleteQuota(db, namespace, name))))
    throw notFound('resourcequota', namespace, name);
  return deleted('resourcequotas', namespace, name);
}

export function queueRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // An apply creates or changes: authorized as a create in the document's namespace (queues and
  // quotas are the namespace's share of the cluster; by default only a cluster-admin writes them).
  const queue = (request: FastifyRequest) => parsedBody(request, (text, type) => readOffLoop('queue', text, type));
  const quota = (request: FastifyRequest) => parsedBody(request, (text, type) => readOffLoop('quota', text, type));
  app.post(
    '/api/v1/queues',
    {
      config: { dryRun: true, access: async (request) => createdIn('queues', [(await queue(request)).namespace]) },
    },
    async (request, reply) => {
      const answer = await applyQueueOf(ctx, await queue(request), writeOptionsOf(request));
      reply.code(answer.code);
      return answer.body;
    },
  );

  // Pages as GET /api/v1/jobs's: `limit` and `continue` (src/api/list-page.ts).
  const queueList = pagedList('QueueList', (namespace, page) => listQueuePage(ctx.db, namespace, page), presentQueue);
  app.get<{ Querystring: PageQuery & { namespace?: string } }>(
    '/api/v1/queues',
    { config: { access: onCollection('list', 'queues') } },
    async (request) => queueList(request.query.namespace || null, request.query),
  );

  app.get<{ Params: { namespace: string }; Querystring: PageQuery }>(
    '/api/v1/namespaces/:namespace/queues',
    { config: { access: onCollection('list', 'queues') } },
    async (request) => queueList(request.params.namespace, request.query),
  );

  app.get<{ Params: ObjectParams }>(
    '/api/v1/namespaces/:namespace/queues/:name',
    { config: { access: onObject('get', 'queues') } },
    async (request) => {
      const { namespace, name } = request.params;
      const row = await getQueue(ctx.db, namespace, name);
      if (!row) throw notFound('queue', namespace, name);
      return presentQueue(row);
    },
  );

  app.delete<{ Params: ObjectParams }>(
    '/api/v1/namespaces/:namespace/queues/:name',
    { config: { dryRun: true, access: onObject('delete', 'queues') } },
    async (request) => removeQueue(ctx, request.params.namespace, request.params.name, writeOptionsOf(request)),
  );

  app.post(
    '/api/v1/resourcequotas',
    {
      config: {
        dryRun: true,
        access: async (request) => createdIn('resourcequotas', [(await quota(request)).namespace]),
      },
    },
    async (request, reply) => {
      const answer = await applyQuotaOf(ctx, await quota(request), writeOptionsOf(request));
      reply.code(answer.code);
      return answer.body;
    },
  );

  const quotaList = pagedList(
    'ResourceQuotaList',
    (namespace, page) => listQuotaPage(ctx.db, namespace, page),
    presentResourceQuota,
  );
  app.get<{ Querystring: PageQuery & { namespace?: string } }>(
    '/api/v1/resourcequotas',
    { config: { access: onCollection('list', 'resourcequotas') } },
    async (request) => quotaList(request.query.namespace || null, request.query),
  );

  app.get<{ Params: { namespace: string }; Querystring: PageQuery }>(
    '/api/v1/namespaces/:namespace/resourcequotas',
    { config: { access: onCollection('list', 'resourcequotas') } },
    async (request) => quotaList(request.params.namespace, request.query),
  );

  // A namespace has at most one quota, so listing the namespace's finds it by name.
  app.get<{ Params: ObjectParams }>(
    '/api/v1/namespaces/:namespace/resourcequotas/:name',
    { config: { access: onObject('get', 'resourcequotas') } },
    async (request) => {
      const { namespace, name } = request.params;
      const row = (await listQuotas(ctx.db, namespace)).find((q) => q.name === name);
      if (!row) throw notFound('resourcequota', namespace, name);
      return presentResourceQuota(row);
    },
  );

  app.delete<{ Params: ObjectParams }>(
    '/api/v1/namespaces/:namespace/resourcequotas/:name',
    { config: { dryRun: true, access: onObject('delete', 'resourcequotas') } },
    async (request) => removeQuota(ctx, request.params.namespace, request.params.name, writeOptionsOf(request)),
  );

  app.get<{ Params: { namespace: string } }>(
    '/api/v1/namespaces/:namespace',
    { config: { access: namespaceAccess('get') } },
    async (request) => {
      const { namespace } = request.params;
      const found = await readNamespace(ctx.db, namespace);
      if (!found) throw new HttpError(404, `namespace ${namespace} not found (no jobs, queues or quota in it)`);
      return found;
    },
  );
}

/**
 * A namespace with its use, or undefined when nothing lives in it ("default" always does: a
 * namespace is only a name). Three reads, each its own snapshot: a use that changes between
 * them is shown as each saw it.
 */
export async function readNamespace(db: ApiContext['db'], namespace: string): Promise<NamespaceResource | undefined> {
  const [usage, quotas, queues] = await Promise.all([
    namespaceUsage(db, namespace),
    listQuotas(db, namespace),
    listQueues(db, namespace),
  ]);
  if (namespace !== DEFAULT_NAMESPACE && queues.length === 0 && quotas.length === 0) return undefined;
  return presentNamespace(namespace, usage, quotas[0], queues);
}

/**
 * A namespace object, as Kubernetes' request attributes give it: cluster-scoped, yet in its own
 * namespace, so a RoleBinding in NS grants reading NS itself.
 */
export function namespaceAccess(verb: string) {
  return (request: FastifyRequest): Access => {
    const { namespace } = request.params as { namespace: string };
    return { verb, apiGroup: '', resource: 'namespaces', namespace, name: namespace };
  };
}

function notFound(kind: string, namespace: string, name: string): HttpError {
  return new HttpError(404, `${kind} ${namespace}/${name} not found`);
}

interface DeletedStatus {
  apiVersion: string;
  kind: 'Status';
  status: 'Success';
  details: { name: string; namespace: string; group: string; kind: string };
}

/** The answer to a delete whose object is gone, as the Kubernetes apiserver's Status. */
function deleted(plural: string, namespace: string, name: string): DeletedStatus {
  return {
    apiVersion: API_VERSION,
    kind: 'Status',
    status: 'Success',
    details: { name, namespace, group: 'fencer.dev', kind: plural },
  };
}
