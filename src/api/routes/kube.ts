// The Kubernetes face of the API: discovery (/api, /apis, aggregated or legacy as the client
// asks), OpenAPI (/openapi/v2, /openapi/v3) from the CRDs, and fencer's objects under their
// group's paths (/apis/fencer.dev/v1/...), read as Kubernetes clients read them: lists with label
// and field selectors, limit/continue, Tables for kubectl, and errors as Status objects. The
// kinds and documents come from src/api/kube/ (pure); the objects from the same store calls and
// presenters as the /api/v1 routes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiContext } from '../context.js';
import { HttpError } from '../../errors/http-error.js';
import { apisKinds, CORE_KINDS, groupVersionOf, kindOfResource, objectKinds, type KubeKind } from '../kube/kinds.js';
import { acceptsJson, discoveryFormat, DISCOVERY_CONTENT_TYPES, parseAccept, tableVersion } from '../kube/accept.js';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions } from '../kube/discovery.js';
import { openApiV2, openApiV3, openApiV3Index } from '../kube/openapi.js';
import { parseIncludeObject, toTable, type KubeObject } from '../kube/table.js';
import { kubeObjects } from '../kube/objects.js';
import { scanSelected, selectObjects, type ObjectQuery } from '../kube/selectors.js';
import { challengeHeader, KubeError, statusOf } from '../kube/status.js';
import { UnauthorizedError } from '../../errors/unauthorized-error.js';
import { listNamespacePage } from '../../store/namespaces.js';
import type { PageRequest } from '../../domain/list-pages.js';
import { continueToken, kubeLimitOf, parseContinue } from '../list-page.js';
import { readNamespace } from './queues.js';
import { streamWatch } from '../kube/object-watch.js';
import { listVersion } from '../../store/watch-feed.js';
import { expectedVersionOf, mergePatch, replaceObject } from '../kube/updates.js';
import { writeOrRehearse } from '../dry-run.js';
import { pathAccess, PUBLIC, type Access } from '../auth-gate.js';
import { kubeVerb, onCollection } from '../route-access.js';
import { isPoolWaitExceeded, shedPoolWait } from '../pool-wait.js';
import { writeOptionsOf, type WriteAnswer, type WriteOptions } from '../write-options.js';
import { createJobs, removeJob } from './jobs.js';
import { createWorkflow, readWorkflow, removeWorkflow } from './workflows.js';
import { applyCronJobOf, propagationOf, readCronJob, removeCronJob } from './cronjobs.js';
import { readOffLoop } from '../validation/off-loop.js';
import { applyQueueOf, applyQuotaOf, removeQueue, removeQuota } from './queues.js';
import { deleteOptionsOf } from '../delete-options.js';
import { IdempotencyKeyReusedError } from '../../errors/idempotency-key-reused-error.js';
import { IdempotencyKeyMismatchError } from '../../errors/idempotency-key-mismatch-error.js';
import { kubeEventRoutes } from './kube-events.js';
import { RBAC_PLURALS, removeRbac, writeRbac } from '../rbac-objects.js';
import { RBAC_GROUP, type RbacKind } from '../../domain/rbac.js';
import { reviewRoutes } from './reviews.js';

interface GroupVersion {
  group: string;
  version: string;
}

export function kubeRoutes(app: FastifyInstance, ctx: ApiContext): void {
  void app.register(async (kube) => {
    kube.setErrorHandler((thrown, request, reply) => {
      const status = statusOf(thrown);
      if (thrown instanceof UnauthorizedError)
        void reply.headers(challengeHeader(request.headers.authorization !== undefined));
      if (status.details?.retryAfterSeconds !== undefined)
        void reply.header('Retry-After', String(status.details.retryAfterSeconds));
      if (status.code >= 500) ctx.logger.error({ err: status.message, url: request.url }, 'request failed');
      void reply.code(status.code).type('application/json').send(status);
    });
    const kinds = objectKinds();
    // Discovery of /apis lists events.k8s.io too; its routes are kubeEventRoutes'.
    const groups = apisKinds();
    const objects = kubeObjects(ctx);
    // A create is the kind's /api/v1 create of the object as JSON, refusals thrown as they are.
    const create = (kind: KubeKind, object: Record<string, unknown>, options: WriteOptions) =>
      apiErrorsOf(() => writesOf(kind, 'POST').create(ctx, JSON.stringify(object), 'application/json', options));
    kubeEventRoutes(kube, ctx);
    reviewRoutes(kube, ctx);

    kube.get('/version', { config: { access: PUBLIC } }, async () => ({
      major: '1',
      minor: '32',
      gitVersion: 'v1.32.0-fencer',
      platform: `${process.platform}/${process.arch}`,
      goVersion: `node${process.versions.node}`,
      compiler: 'fencer',
    }));

    const discovery = (request: FastifyRequest, reply: FastifyReply, legacy: () => unknown, core: boolean) => {
      const format = discoveryFormat(parseAccept(request.headers.accept));
      if (format === null)
        throw new HttpError(406, `none of the media types in Accept can be served: ${request.headers.accept}`);
      void reply.type(DISCOVERY_CONTENT_TYPES[format]);
      if (format === 'legacy') return legacy();
      return aggregatedDiscovery(core ? CORE_KINDS : groups, format === 'aggregated-v2' ? 'v2' : 'v2beta1');
    };
    const discoveryAccess = { config: { access: pathAccess() } };
    kube.get('/api', discoveryAccess, async (request, reply) =>
      discovery(request, reply, () => apiVersions(ctx.url), true),
    );
    kube.get('/apis', discoveryAccess, async (request, reply) =>
      discovery(request, reply, () => apiGroupList(groups), false),
    );
    kube.get('/api/v1', discoveryAccess, async () => apiResourceList(CORE_KINDS, 'v1'));
    // The core namespaces: every namespace something lives in, with fencer's use in each status.
    kube.get<{ Querystring: ObjectQuery }>(
      '/api/v1/namespaces',
      { config: { access: onCollection('list', 'namespaces', undefined, '') } },
      async (request, reply) => {
        const resourceVersion = String(await listVersion(ctx.db));
        const read = async (names: string[]) =>
          (await Promise.all(names.map((name) => readNamespace(ctx.db, name)))).filter(
            (n) => n !== undefined,
          ) as unknown as KubeObject[];
        // A page of names from the store, and only those namespaces read; with selectors, read in
        // chunks and filtered as they come.
        const { query } = request;
        const readPage = async (page: PageRequest) => {
          const names = await listNamespacePage(ctx.db, page);
          return { rows: await read(names.rows), next: names.next };
        };
        const found: { items: KubeObject[]; continue?: string; remaining?: number } =
          !query.labelSelector && !query.fieldSelector
            ? await (async () => {
                const page = await readPage({
                  limit: kubeLimitOf(query.limit),
                  after: query.continue ? parseContinue(query.continue, null) : null,
                });
                return { items: page.rows, ...(page.next ? { continue: continueToken(page.next) } : {}) };
              })()
            : await scanSelected(readPage, query, null);
        return answer(request, reply, CORE_KINDS[0]!, found.items, {
          resourceVersion,
          continue: found.continue,
          remainingItemCount: found.remaining,
        });
      },
    );
    kube.get<{ Params: { group: string } }>('/apis/:group', discoveryAccess, async (request) => {
      const found = apiGroup(groups, request.params.group);
      if (!found)
        throw new HttpError(404, `the server could not find the requested resource (group ${request.params.group})`);
      return found;
    });
    kube.get<{ Params: GroupVersion }>('/apis/:group/:version', discoveryAccess, async (request) => {
      const found = apiResourceList(groups, `${request.params.group}/${request.params.version}`);
      if (!found)
        throw new HttpError(
          404,
          `the server could not find the requested resource (${request.params.group}/${request.params.version})`,
        );
      return found;
    });

    kube.get('/openapi/v2', discoveryAccess, async (request) => {
      // kubectl asks for protobuf only; it reads v3 for explain and validation.
      if (!acceptsJson(parseAccept(request.headers.accept)))
        throw new HttpError(406, 'only application/json is served');
      return openApiV2(kinds);
    });
    kube.get('/openapi/v3', discoveryAccess, async () => openApiV3Index(kinds));
    kube.get<{ Params: GroupVersion }>('/openapi/v3/apis/:group/:version', discoveryAccess, async (request) => {
      const found = openApiV3(kinds, `apis/${request.params.group}/${request.params.version}`);
      if (!found) throw new HttpError(404, `no OpenAPI document for ${request.params.group}/${request.params.version}`);
      return found;
    });

    type ListParams = GroupVersion & { plural: string; namespace?: string };
    type GetParams = ListParams & { name: string };
    const list = async (
      request: FastifyRequest<{ Params: ListParams; Querystring: ObjectQuery }>,
      reply: FastifyReply,
    ) => {
      const kind = kindOf(kinds, request.params);
      const namespace = kind.namespaced ? (request.params.namespace ?? null) : null;
      if (request.query.watch === 'true' || request.query.watch === '1') {
        return streamWatch(
          ctx.db,
          objects,
          reply,
          kind,
          namespace,
          request.query,
          tableVersion(parseAccept(request.headers.accept)),
        );
      }
      // Read before the objects: a watch from it misses nothing the list lacks.
      const resourceVersion = String(await listVersion(ctx.db));
      const found =
        (await objects.page(kind, namespace, request.query)) ??
        selectObjects(await objects.list(kind, namespace), request.query, namespace);
      return answer(request, reply, kind, found.items, {
        resourceVersion,
        continue: found.continue,
        remainingItemCount: found.remaining,
      });
    };
    const get = async (
      request: FastifyRequest<{ Params: GetParams; Querystring: ObjectQuery }>,
      reply: FastifyReply,
    ) => {
      const kind = kindOf(kinds, request.params);
      const namespace = kind.namespaced ? (request.params.namespace ?? 'default') : null;
      const object = await objects.get(kind, namespace, request.params.name);
      if (!object) throw new HttpError(404, `${kind.plural}.${kind.group} "${request.params.name}" not found`);
      return answer(request, reply, kind, [object], null);
    };
    // The namespace a write's path names (null for a cluster-scoped kind), checked against the kind.
    const scopeOf = (kind: KubeKind, namespace: string | undefined): string | null => {
      if (kind.namespaced && namespace === undefined)
        throw new HttpError(404, `${kind.plural} are namespaced: write them under /namespaces/NAMESPACE/`);
      return kind.namespaced ? namespace! : null;
    };
    // A whole object written over the one stored (PUT, a merge patch, server-side apply).
    const replace = (
      request: FastifyRequest,
      kind: KubeKind,
      namespace: string | null,
      current: KubeObject,
      desired: Record<string, unknown>,
      version: number | null,
    ) =>
      kind.group === RBAC_GROUP
        ? replaceRbac(ctx, kind, current, desired, version, writeOptionsOf(request))
        : writeOrRehearse(request, ctx.db, (db) =>
            replaceObject({ ...ctx, db }, kind, current, desired, version, () =>
              kubeObjects({ ...ctx, db }).get(kind, namespace, String(current.metadata?.name)),
            ),
          );

    // Creates and deletes call the /api/v1 routes' write functions (one validation and one store
    // path per kind), with their answers turned into Kubernetes ones: a create of an object that
    // exists is AlreadyExists even when it is the same, refusals are Status objects with their causes.
    const createObject = async (request: FastifyRequest<{ Params: ListParams }>, reply: FastifyReply) => {
      const kind = kindOf(kinds, request.params);
      const namespace = scopeOf(kind, request.params.namespace);
      const object = await objectIn(String(request.body ?? ''), namespace);
      // The /api/v1 write of a Queue, ResourceQuota or CronJob applies (creates or changes): a
      // create of one that exists must not change it. A create racing another for the same name
      // may still be taken as a change.
      const named = (object.metadata as { name?: unknown }).name;
      if (typeof named === 'string' && named !== '' && (await objects.get(kind, namespace, named))) {
        throw new KubeError(409, 'AlreadyExists', `${kind.plural}.${kind.group} "${named}" already exists`);
      }
      const answered = await create(kind, object, writeOptionsOf(request));
      if (answered.code === 200)
        throw new KubeError(
          409,
          'AlreadyExists',
          `${kind.plural}.${kind.group} "${String((answered.body as { metadata?: { name?: string } }).metadata?.name)}" already exists`,
        );
      void reply.code(201);
      return answered.body;
    };
    // propagationPolicy (query or DeleteOptions body): Orphan leaves a CronJob's Jobs and
    // workflows running; a workflow's jobs need their workflow, so it cannot orphan them.
    const deleteObject = async (
      request: FastifyRequest<{ Params: GetParams; Querystring: { propagationPolicy?: string } }>,
    ) => {
      const kind = kindOf(kinds, request.params);
      const namespace = scopeOf(kind, request.params.namespace);
      const { name } = request.params;
      const policy = propagationOf(request.query.propagationPolicy ?? deleteOptionsOf(request.body)?.propagationPolicy);
      if (policy === 'Orphan' && kind.kind === 'Workflow')
        throw new KubeError(
          422,
          'Invalid',
          "propagationPolicy Orphan: a workflow's jobs wait on each other through it and cannot be left without it",
        );
      const remove = writesOf(kind, 'DELETE').remove;
      await apiErrorsOf(() => remove(ctx, namespace ?? '', name, policy === 'Orphan', writeOptionsOf(request)));
      return {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, group: kind.group, kind: kind.plural },
      };
    };
    // A whole new object, optimistic on the resourceVersion it names.
    const putObject = async (request: FastifyRequest<{ Params: GetParams }>) => {
      const kind = kindOf(kinds, request.params);
      const namespace = scopeOf(kind, request.params.namespace);
      const { name } = request.params;
      const current = await objects.get(kind, namespace, name);
      if (!current) throw new HttpError(404, `${kind.plural}.${kind.group} "${name}" not found`);
      const desired = await objectIn(String(request.body ?? ''), namespace);
      return replace(request, kind, namespace, current, desired, expectedVersionOf(desired));
    };
    // A JSON merge patch, or server-side apply (which also creates). Each applies to the object
    // as read and writes at its version, read again if another change came first.
    const patchObject = async (request: FastifyRequest<{ Params: GetParams }>, reply: FastifyReply) => {
      const kind = kindOf(kinds, request.params);
      const namespace = scopeOf(kind, request.params.namespace);
      const { name } = request.params;
      const type = String(request.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim();
      // A strategic merge patch (kubectl patch's default) is taken as a merge patch: these kinds
      // have no list whose items merge by key, so the two agree on them but for a list, which a
      // merge patch replaces whole.
      if (
        type !== 'application/merge-patch+json' &&
        type !== 'application/strategic-merge-patch+json' &&
        type !== 'application/apply-patch+yaml'
      ) {
        throw new HttpError(
          415,
          `${type || 'no content type'}: patches of ${kind.plural} are application/merge-patch+json, application/strategic-merge-patch+json or application/apply-patch+yaml (server-side apply)`,
        );
      }
      const patch = await objectIn(String(request.body ?? ''), namespace);
      for (let attempt = 0; ; attempt++) {
        const current = await objects.get(kind, namespace, name);
        if (!current) {
          if (type !== 'application/apply-patch+yaml')
            throw new HttpError(404, `${kind.plural}.${kind.group} "${name}" not found`);
          // An apply that creates is a create, as Kubernetes authorizes it (patch alone is not enough).
          request.authorizeAlso?.({ ...objectAccess(request), verb: 'create' });
          const answered = await create(
            kind,
            { ...patch, metadata: { ...(patch.metadata as object), name } },
            writeOptionsOf(request),
          );
          void reply.code(201);
          return answered.body;
        }
        // A patch that names a resourceVersion (kubectl label --resource-version) is a
        // precondition: a Conflict if the object has moved on, never read again and retried.
        const named = expectedVersionOf(patch);
        const version = named ?? expectedVersionOf(current as Record<string, unknown>);
        try {
          const desired = mergePatch(current, patch) as Record<string, unknown>;
          return await replace(request, kind, namespace, current, desired, version);
        } catch (error) {
          if (!(error instanceof KubeError && error.reason === 'Conflict') || named !== null || attempt >= 3)
            throw error;
        }
      }
    };
    for (const prefix of ['/apis/:group/:version/namespaces/:namespace', '/apis/:group/:version']) {
      kube.post<{ Params: ListParams }>(`${prefix}/:plural`, OBJECT_WRITE, createObject);
      kube.delete<{ Params: GetParams; Querystring: { propagationPolicy?: string } }>(
        `${prefix}/:plural/:name`,
        OBJECT_WRITE,
        deleteObject,
      );
      kube.put<{ Params: GetParams }>(`${prefix}/:plural/:name`, OBJECT_WRITE, putObject);
      kube.patch<{ Params: GetParams }>(`${prefix}/:plural/:name`, OBJECT_WRITE, patchObject);
    }
    const read = { config: { access: objectAccess } };
    kube.get('/apis/:group/:version/namespaces/:namespace/:plural', read, list);
    kube.get('/apis/:group/:version/namespaces/:namespace/:plural/:name', read, get);
    kube.get('/apis/:group/:version/namespaces/:namespace/:plural/:name/status', read, get);
    kube.get('/apis/:group/:version/:plural', read, list);
    kube.get('/apis/:group/:version/:plural/:name', read, get);
    kube.get('/apis/:group/:version/:plural/:name/status', read, get);
  });
}

/** The attributes of a request under /apis/GROUP/VERSION/[namespaces/NS/]PLURAL[/NAME[/status]]. */
function objectAccess(request: FastifyRequest): Access {
  const { group, plural, namespace, name } = request.params as Partial<GroupVersion & ObjectParams>;
  const status = name !== undefined && request.url.split('?')[0]!.endsWith('/status');
  return {
    verb: kubeVerb(request, name !== undefined),
    apiGroup: group ?? '',
    resource: plural ?? '',
    ...(status ? { subresource: 'status' } : {}),
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  };
}

const OBJECT_WRITE = { config: { dryRun: true, access: objectAccess } } as const;

interface ObjectParams {
  plural: string;
  namespace: string;
  name: string;
}

function kindOf(
  kinds: readonly KubeKind[],
  params: { group: string; version: string; plural: string; namespace?: string },
): KubeKind {
  const kind = kindOfResource(kinds, params.group, params.version, params.plural);
  if (!kind)
    throw new HttpError(
      404,
      `the server could not find the requested resource (${params.plural}.${params.group}/${params.version})`,
    );
  if (!kind.namespaced && params.namespace !== undefined) throw new HttpError(404, `${kind.plural} are not namespaced`);
  return kind;
}

/** One object, or a list: as JSON, or as the Table kubectl asks for. */
function answer(
  request: FastifyRequest<{ Querystring: ObjectQuery }>,
  reply: FastifyReply,
  kind: KubeKind,
  items: KubeObject[],
  listMeta: { resourceVersion: string; continue?: string; remainingItemCount?: number } | null,
) {
  const table = tableVersion(parseAccept(request.headers.accept));
  if (table) {
    const includeObject = parseIncludeObject(request.query.includeObject);
    if (includeObject === null) throw new HttpError(400, 'includeObject must be None, Metadata or Object');
    void reply.type('application/json');
    return toTable(kind, items, { now: new Date(), includeObject, version: table, listMeta: listMeta ?? undefined });
  }
  if (!listMeta) return items[0];
  return {
    apiVersion: groupVersionOf(kind),
    kind: kind.listKind,
    metadata: {
      resourceVersion: listMeta.resourceVersion,
      ...(listMeta.continue ? { continue: listMeta.continue, remainingItemCount: listMeta.remainingItemCount } : {}),
    },
    items,
  };
}

/** The object of a create: JSON or YAML, in the request's namespace (or none: it takes that one). */
async function objectIn(text: string, namespace: string | null): Promise<Record<string, unknown>> {
  const object = await readOffLoop('object', text, undefined);
  if (object === null || typeof object !== 'object' || Array.isArray(object))
    throw new HttpError(400, 'the body must be one object');
  const fields = object as Record<string, unknown>;
  const metadata = (fields.metadata ?? {}) as Record<string, unknown>;
  // A cluster-scoped object has no namespace: one it names is dropped, as kube-apiserver drops it.
  if (namespace === null) {
    const { namespace: _dropped, ...rest } = metadata;
    return { ...fields, metadata: rest };
  }
  if (metadata.namespace !== undefined && metadata.namespace !== namespace) {
    throw new HttpError(
      400,
      `the namespace of the provided object (${String(metadata.namespace)}) does not match the namespace sent on the request (${namespace})`,
    );
  }
  return { ...fields, metadata: { ...metadata, namespace } };
}

/** The writes of each kind the /api/v1 routes serve, by plural: the Kubernetes API's are the same. */
interface KindWrites {
  create(ctx: ApiContext, text: string, contentType: string, options: WriteOptions): Promise<WriteAnswer>;
  remove(ctx: ApiContext, namespace: string, name: string, orphan: boolean, options: WriteOptions): Promise<unknown>;
}

const WRITES: Record<string, KindWrites> = {
  jobs: {
    create: async (ctx, text, contentType, options) =>
      createJobs(ctx, await readOffLoop('submission', text, contentType), options),
    remove: (ctx, namespace, name, _orphan, options) => removeJob(ctx, namespace, name, options),
  },
  workflows: {
    create: async (ctx, text, contentType, options) =>
      createWorkflow(ctx, await readWorkflow(text, contentType), options),
    remove: (ctx, namespace, name, _orphan, options) => removeWorkflow(ctx, namespace, name, options),
  },
  cronjobs: {
    create: async (ctx, text, contentType, options) =>
      applyCronJobOf(ctx, await readCronJob(text, contentType), options),
    remove: removeCronJob,
  },
  queues: {
    create: async (ctx, text, contentType, options) =>
      applyQueueOf(ctx, await readOffLoop('queue', text, contentType), options),
    remove: (ctx, namespace, name, _orphan, options) => removeQueue(ctx, namespace, name, options),
  },
  resourcequotas: {
    create: async (ctx, text, contentType, options) =>
      applyQuotaOf(ctx, await readOffLoop('quota', text, contentType), options),
    remove: (ctx, namespace, name, _orphan, options) => removeQuota(ctx, namespace, name, options),
  },
};

for (const [kind, plural] of Object.entries(RBAC_PLURALS) as Array<[RbacKind, string]>)
  WRITES[plural] = {
    create: async (ctx, text, contentType, options) => {
      const { written, object } = await writeRbac(ctx, await readOffLoop('rbac', text, contentType), options);
      return { code: written === 'created' ? 201 : 200, body: object };
    },
    remove: async (ctx, namespace, name, _orphan, options) => {
      if (!(await removeRbac(ctx, kind, namespace === '' ? null : namespace, name, options)))
        throw new HttpError(404, `${plural}.${RBAC_GROUP} "${name}" not found`);
    },
  };

/** An RBAC object written whole over the stored one (its rules, or its subjects and roleRef). */
async function replaceRbac(
  ctx: ApiContext,
  kind: KubeKind,
  current: KubeObject,
  desired: Record<string, unknown>,
  version: number | null,
  options: WriteOptions,
): Promise<KubeObject> {
  const { name, namespace } = (current.metadata ?? {}) as { name?: string; namespace?: string };
  const metadata = (desired.metadata ?? {}) as Record<string, unknown>;
  if (metadata.name !== undefined && metadata.name !== name)
    throw new HttpError(
      400,
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`,
    );
  const body = {
    apiVersion: desired.apiVersion,
    kind: kind.kind,
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
    },
    ...(desired.rules !== undefined ? { rules: desired.rules } : {}),
    ...(desired.subjects !== undefined ? { subjects: desired.subjects } : {}),
    ...(desired.roleRef !== undefined ? { roleRef: desired.roleRef } : {}),
  };
  const rbac = await readOffLoop('rbac', JSON.stringify(body), 'application/json');
  return (await writeRbac(ctx, rbac, options, version)).object;
}

function writesOf(kind: KubeKind, method: 'POST' | 'DELETE'): KindWrites {
  const writes = WRITES[kind.plural];
  if (!writes) throw new HttpError(404, `no route for ${method} of ${kind.plural}`);
  return writes;
}

/**
 * Refusals the /api/v1 error handler answers by code (src/api/server.ts) that the Status handler
 * would otherwise take for a 500: a reused Idempotency-Key (409) and a replica with no database
 * connection free in time (503).
 */
async function apiErrorsOf<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof IdempotencyKeyReusedError) throw new HttpError(409, error.message);
    if (error instanceof IdempotencyKeyMismatchError) throw new KubeError(422, 'Invalid', error.message);
    if (isPoolWaitExceeded(error)) throw shedPoolWait();
    throw error;
  }
}
