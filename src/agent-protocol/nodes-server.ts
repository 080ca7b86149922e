// Nodes: register, heartbeat and the watch stream (any replica, also while nobody leads),
// plus the list users read. The server's side of the node protocol; src/api/server.ts registers it.
import { listMetadata, pageRequestOf, type PageQuery } from '../api/list-page.js';
import { maxLabels } from '../config.js';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Access } from '../api/auth-gate.js';
import { onCollection } from '../api/route-access.js';
import { FENCER_GROUP } from '../auth/rbac/builtin.js';
import type { ApiContext } from '../api/context.js';
import { jsonObject } from '../api/body.js';
import { HttpError } from '../errors/http-error.js';
import { ValidationError } from '../errors/validation-error.js';
import { heartbeat, listNodePage, openWatch, registerNode, type RegistrationAuthority } from './nodes-store.js';
import { ForbiddenError } from '../errors/forbidden-error.js';
import { SupersededCredentialError } from '../errors/superseded-credential-error.js';
import { JoinTokenNodeError } from '../errors/join-token-node-error.js';
import { NODE_CREDENTIAL_TTL_MS, nodeIdentityOf, type NodeIdentity } from '../domain/node-identity.js';
import { presentNode } from '../api/present.js';
import { injectFault } from '../api/route-faults.js';
import { StaleIncarnationError } from '../errors/stale-incarnation-error.js';
import { API_VERSION, DEFAULT_MAX_JOBS } from '../domain/resources.js';
import { parseCpu, parseMemory } from '../domain/quantity.js';
import { isDns1123Subdomain } from '../domain/names.js';
import type { HeartbeatResponse, RegisterResponse } from './messages.js';
import { NODE_ROUTES } from './routes.js';

export function nodeRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // The node restriction (src/auth/rbac/authorize.ts) reads `node`: a node's credential
  // registers, heartbeats, watches and reports for its own name alone.
  // A join token (the gate sets it aside, `config.join`) or the node's current credential lets a
  // registration in; it is answered a credential for the process that registered.
  app.post(NODE_ROUTES.register.route, { config: { access: registerAccess, join: true } }, async (request) => {
    const body = jsonObject(request.body);
    const { name, cpuMillis, memoryBytes, labels, incarnation, generation, images, maxJobs } =
      validateRegistration(body);
    const authority = registrationAuthority(request, ctx, name);
    if (authority && incarnation === null)
      throw new ValidationError([{ path: 'incarnation', message: 'required: the node credential is bound to it' }]);
    let row;
    try {
      // The API's pool, not the liveness pool: a registration is several statements, and a wave of
      // nodes joining must not hold the heartbeats of the nodes already there (docs/connections.md).
      row = await registerNode(
        ctx.db,
        name,
        cpuMillis,
        memoryBytes,
        labels,
        incarnation,
        generation,
        images,
        maxJobs,
        authority,
      );
    } catch (err) {
      if (err instanceof StaleIncarnationError) throw new HttpError(409, err.message);
      throw refusalOf(err);
    }
    const registered = row.generation == null ? null : Number(row.generation);
    const minted =
      authority && incarnation !== null && registered !== null
        ? await ctx.nodeCredentials.mint({ node: name, incarnation, generation: registered })
        : null;
    const answer: RegisterResponse = {
      name,
      heartbeatIntervalMs: ctx.timings.heartbeatMs,
      generation: registered,
      credential: minted?.token ?? null,
      credentialExpiresAt: minted?.expiresAt.toISOString() ?? null,
    };
    return answer;
  });

  app.post<{ Params: { name: string } }>(
    NODE_ROUTES.heartbeat.route,
    { config: { access: onNode('create', 'heartbeat') } },
    async (request) => {
      const identity = nodeIdentity(request, ctx);
      await injectFault('heartbeats', request.params.name);
      const state = await heartbeat(ctx.liveness, request.params.name, identity).catch((err: unknown) => {
        throw refusalOf(err);
      });
      if (state === 'unknown') throw new HttpError(404, `node ${request.params.name} is not registered`);
      if (state === 'Dead')
        throw new HttpError(410, `node ${request.params.name} was declared dead: stop every job and register again`);
      const answer: HeartbeatResponse = { ok: true };
      // Renewed once half its life is gone: a node that heartbeats never holds an expired one.
      if (identity && (request.tokenExpiresAtMs ?? 0) - Date.now() < NODE_CREDENTIAL_TTL_MS / 2) {
        const minted = await ctx.nodeCredentials.mint(identity);
        answer.credential = minted.token;
        answer.credentialExpiresAt = minted.expiresAt.toISOString();
      }
      return answer;
    },
  );

  app.get<{ Params: { name: string }; Querystring: { attempt?: string; incarnation?: string } }>(
    NODE_ROUTES.watch.route,
    { config: { access: onNode('get', 'watch') } },
    async (request, reply) => {
      const { name } = request.params;
      const identity = nodeIdentity(request, ctx);
      const session = randomUUID();
      const attempt = request.query.attempt === undefined ? null : Number(request.query.attempt);
      if (attempt !== null && !Number.isSafeInteger(attempt))
        throw new HttpError(400, `attempt: "${request.query.attempt}" is not an integer`);
      const asked = request.query.incarnation ?? null;
      if (asked !== null && !UUID.test(asked)) throw new HttpError(400, `incarnation: "${asked}" is not a UUID`);
      if (identity && asked !== null && asked !== identity.incarnation)
        throw new HttpError(400, `incarnation: "${asked}" is not the credential's (${identity.incarnation})`);
      const incarnation = identity?.incarnation ?? asked;
      const state = await openWatch(
        ctx.liveness,
        name,
        session,
        ctx.replica,
        attempt,
        incarnation,
        identity?.generation ?? null,
      ).catch((err: unknown) => {
        throw refusalOf(err);
      });
      if (state === 'unknown') throw new HttpError(404, `node ${name} is not registered`);
      if (state === 'superseded')
        throw new HttpError(
          409,
          `watch attempt ${attempt} of node ${name} came after a newer one (or from an old incarnation)`,
        );
      if (state === 'Dead')
        throw new HttpError(410, `node ${name} was declared dead: stop every job and register again`);
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
      ctx.watches.open(name, session, reply.raw);
    },
  );

  // Pages as GET /api/v1/jobs's, by name: `limit` and `continue` (src/api/list-page.ts).
  app.get<{ Querystring: PageQuery }>(
    '/api/v1/nodes',
    { config: { access: onCollection('list', 'nodes') } },
    async (request) => {
      const page = await listNodePage(ctx.db, pageRequestOf(request.query, null));
      return {
        apiVersion: API_VERSION,
        kind: 'NodeList',
        metadata: listMetadata(page.next),
        items: page.rows.map(presentNode),
      };
    },
  );
}

/**
 * What lets this registration in: the join token the gate set aside, or the node's credential
 * (whose process the store checks is the node's current one); null without authentication. A
 * user's token (even cluster-admin's) is no node: 403.
 */
function registrationAuthority(request: FastifyRequest, ctx: ApiContext, name: string): RegistrationAuthority | null {
  if (request.joinToken) return { joinToken: request.joinToken };
  if (ctx.gate === 'insecure-no-auth') return null;
  return { credential: nodeIdentity(request, ctx, name)! };
}

/**
 * The node process a request of the node protocol speaks for: its credential's (the gate verified
 * it; the node restriction held it to `name`). A user's token is refused (403); null only on a
 * replica without authentication.
 */
export function nodeIdentity(
  request: FastifyRequest,
  ctx: ApiContext,
  name = (request.params as { name: string }).name,
): NodeIdentity | null {
  if (ctx.gate === 'insecure-no-auth') return null;
  const identity = request.user ? nodeIdentityOf(request.user) : null;
  if (identity === null || identity.node !== name)
    throw new ForbiddenError(
      `nodes.${FENCER_GROUP} "${name}" is forbidden: User "${request.user?.username ?? ''}" is not a node credential of node "${name}": a node speaks with the credential its registration answered (docs/security.md, Node identity)`,
      { group: FENCER_GROUP, resource: 'nodes', name },
    );
  return identity;
}

/**
 * A replaced process's credential, or a join token bound to another node, is a 403, like any
 * credential that may not act.
 */
export function refusalOf(err: unknown): unknown {
  if (err instanceof SupersededCredentialError || err instanceof JoinTokenNodeError)
    return new ForbiddenError(`nodes.${FENCER_GROUP} "${err.node}" is forbidden: ${err.message}`, {
      group: FENCER_GROUP,
      resource: 'nodes',
      name: err.node,
    });
  return err;
}

function registerAccess(request: FastifyRequest): Access {
  const name = jsonObject(request.body).name;
  return {
    verb: 'create',
    apiGroup: FENCER_GROUP,
    resource: 'nodes',
    ...(typeof name === 'string' && name !== '' ? { node: name } : {}),
  };
}

/** `verb` on a subresource of the node the path names, for that node. */
export function onNode(verb: string, subresource: string) {
  return (request: FastifyRequest): Access => {
    const { name } = request.params as { name: string };
    return { verb, apiGroup: FENCER_GROUP, resource: 'nodes', subresource, name, node: name };
  };
}

/** The most runs a node may say it holds at once: far beyond what one node runs, a typo caught. */
const MAX_JOBS_LIMIT = 100_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function validateRegistration(body: Record<string, unknown>) {
  const problems: Array<{ path: string; message: string }> = [];
  const name = body.name;
  if (typeof name !== 'string' || !isDns1123Subdomain(name)) {
    problems.push({
      path: 'name',
      message: `${JSON.stringify(name)} is not a valid node name: lowercase letters, digits, '-' and '.' (a DNS-1123 subdomain, as Kubernetes names nodes), at most 253 characters`,
    });
  }
  const capacity = (body.capacity ?? {}) as Record<string, unknown>;
  const cpuMillis =
    typeof capacity.cpu === 'string' || typeof capacity.cpu === 'number' ? parseCpu(capacity.cpu) : null;
  const memoryBytes =
    typeof capacity.memory === 'string' || typeof capacity.memory === 'number' ? parseMemory(capacity.memory) : null;
  if (!cpuMillis || cpuMillis <= 0)
    problems.push({ path: 'capacity.cpu', message: `${JSON.stringify(capacity.cpu)} is not a positive CPU quantity` });
  if (!memoryBytes || memoryBytes <= 0)
    problems.push({
      path: 'capacity.memory',
      message: `${JSON.stringify(capacity.memory)} is not a positive memory quantity`,
    });
  const maxJobs = capacity.jobs ?? DEFAULT_MAX_JOBS;
  if (!(typeof maxJobs === 'number' && Number.isSafeInteger(maxJobs) && maxJobs > 0 && maxJobs <= MAX_JOBS_LIMIT)) {
    problems.push({
      path: 'capacity.jobs',
      message: `${JSON.stringify(capacity.jobs)} is not a whole number of runs from 1 to ${MAX_JOBS_LIMIT}`,
    });
  }
  const labels = (body.labels ?? {}) as Record<string, unknown>;
  if (Object.keys(labels).length > maxLabels())
    problems.push({
      path: 'labels',
      message: `${Object.keys(labels).length} entries: at most ${maxLabels()} (FENCER_MAX_LABELS)`,
    });
  for (const [key, value] of Object.entries(labels)) {
    if (typeof value !== 'string') problems.push({ path: `labels.${key}`, message: 'must be a string' });
  }
  const images = body.images ?? [];
  if (!Array.isArray(images) || images.some((i) => typeof i !== 'string' || i === '')) {
    problems.push({ path: 'images', message: 'must be a list of image names' });
  }
  const incarnation = body.incarnation ?? null;
  if (incarnation !== null && (typeof incarnation !== 'string' || !UUID.test(incarnation))) {
    problems.push({ path: 'incarnation', message: `${JSON.stringify(incarnation)} is not a UUID` });
  }
  const generation = body.generation ?? null;
  if (generation !== null && !(typeof generation === 'number' && Number.isSafeInteger(generation) && generation >= 0)) {
    problems.push({ path: 'generation', message: `${JSON.stringify(generation)} is not a non-negative integer` });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return {
    generation: generation as number | null,
    name: name as string,
    cpuMillis: cpuMillis!,
    memoryBytes: memoryBytes!,
    labels: labels as Record<string, string>,
    incarnation: incarnation as string | null,
    images: images as string[],
    maxJobs: maxJobs as number,
  };
}
