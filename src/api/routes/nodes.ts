// Nodes: register, heartbeat and the watch stream (any replica, also while nobody leads),
// plus the list users read.
import { maxLabels } from '../../config.js';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Access } from '../auth-gate.js';
import { onCollection } from '../route-access.js';
import { FENCER_GROUP } from '../../auth/rbac/builtin.js';
import type { ApiContext } from '../context.js';
import { jsonObject } from '../body.js';
import { HttpError } from '../../errors/http-error.js';
import { ValidationError } from '../../errors/validation-error.js';
import { heartbeat, listNodes, openWatch, registerNode } from '../../store/nodes.js';
import { presentNode } from '../present.js';
import { injectFault } from '../route-faults.js';
import { StaleIncarnationError } from '../../errors/stale-incarnation-error.js';
import { API_VERSION, DEFAULT_MAX_JOBS } from '../../domain/resources.js';
import { parseCpu, parseMemory } from '../../domain/quantity.js';
import { isDns1123Subdomain } from '../../domain/names.js';
import type { RegisterResponse } from '../../domain/assignment.js';
import { NODE_ROUTES } from '../../domain/node-routes.js';

export function nodeRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // The node restriction (src/auth/rbac/authorize.ts) reads `node`: a node's credential
  // registers, heartbeats, watches and reports for its own name alone.
  app.post(NODE_ROUTES.register.route, { config: { access: registerAccess } }, async (request) => {
    const body = jsonObject(request.body);
    const { name, cpuMillis, memoryBytes, labels, incarnation, generation, images, maxJobs } =
      validateRegistration(body);
    try {
      await registerNode(ctx.liveness, name, cpuMillis, memoryBytes, labels, incarnation, generation, images, maxJobs);
    } catch (err) {
      if (err instanceof StaleIncarnationError) throw new HttpError(409, err.message);
      throw err;
    }
    const answer: RegisterResponse = { name, heartbeatIntervalMs: ctx.timings.heartbeatMs };
    return answer;
  });

  app.post<{ Params: { name: string } }>(
    NODE_ROUTES.heartbeat.route,
    { config: { access: onNode('create', 'heartbeat') } },
    async (request) => {
      await injectFault('heartbeats', request.params.name);
      const state = await heartbeat(ctx.liveness, request.params.name);
      if (state === 'unknown') throw new HttpError(404, `node ${request.params.name} is not registered`);
      if (state === 'Dead')
        throw new HttpError(410, `node ${request.params.name} was declared dead: stop every job and register again`);
      return { ok: true };
    },
  );

  app.get<{ Params: { name: string }; Querystring: { attempt?: string; incarnation?: string } }>(
    NODE_ROUTES.watch.route,
    { config: { access: onNode('get', 'watch') } },
    async (request, reply) => {
      const { name } = request.params;
      const session = randomUUID();
      const attempt = request.query.attempt === undefined ? null : Number(request.query.attempt);
      if (attempt !== null && !Number.isSafeInteger(attempt))
        throw new HttpError(400, `attempt: "${request.query.attempt}" is not an integer`);
      const incarnation = request.query.incarnation ?? null;
      if (incarnation !== null && !UUID.test(incarnation))
        throw new HttpError(400, `incarnation: "${incarnation}" is not a UUID`);
      const state = await openWatch(ctx.liveness, name, session, ctx.replica, attempt, incarnation);
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

  app.get('/api/v1/nodes', { config: { access: onCollection('list', 'nodes') } }, async () => {
    const rows = await listNodes(ctx.db);
    return { apiVersion: API_VERSION, kind: 'NodeList', items: rows.map(presentNode) };
  });
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
