// The Events, read-only, in both groups clients ask them of: core v1 (/api/v1/[namespaces/NS/]
// events[/NAME]: kubectl get events, describe, kubectl events) and events.k8s.io/v1 (the same
// under /apis/events.k8s.io/v1). Registered in kubeRoutes' plugin, so refusals are Status
// objects. What they read and how: src/api/kube/events/.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiContext } from '../context.js';
import { HttpError } from '../../errors/http-error.js';
import { CORE_EVENT_KIND, EVENTS_KIND, groupVersionOf, type KubeKind } from '../kube/kinds.js';
import { parseAccept, tableVersion, type TableVersion } from '../kube/accept.js';
import { parseIncludeObject, type IncludeObject } from '../kube/table.js';
import type { ObjectQuery } from '../kube/selectors.js';
import { getEvent, listEvents, type EventShape } from '../kube/events/read.js';
import { eventTable } from '../kube/events/table.js';
import { streamEventWatch } from '../kube/events/watch.js';
import type { Access } from '../auth-gate.js';
import { kubeVerb } from '../route-access.js';

const SHAPES: ReadonlyArray<{ prefix: string; shape: EventShape; kind: KubeKind }> = [
  { prefix: '/api/v1', shape: 'core', kind: CORE_EVENT_KIND },
  { prefix: '/apis/events.k8s.io/v1', shape: 'events.k8s.io', kind: EVENTS_KIND },
];

type ListRequest = FastifyRequest<{ Params: { namespace?: string }; Querystring: ObjectQuery }>;
type GetRequest = FastifyRequest<{ Params: { namespace: string; name: string }; Querystring: ObjectQuery }>;

export function kubeEventRoutes(kube: FastifyInstance, ctx: ApiContext): void {
  for (const { prefix, shape, kind } of SHAPES) {
    const list = async (request: ListRequest, reply: FastifyReply) => {
      const namespace = request.params.namespace ?? null;
      const table = tableOf(request);
      if (request.query.watch === 'true' || request.query.watch === '1')
        return streamEventWatch(ctx.db, reply, shape, namespace, request.query, table);
      const found = await listEvents(ctx.db, shape, namespace, request.query);
      const listMeta = {
        resourceVersion: found.resourceVersion,
        ...(found.continue ? { continue: found.continue, remainingItemCount: found.remainingItemCount } : {}),
      };
      if (table)
        return reply.type('application/json').send(eventTable(found.items, { now: new Date(), ...table, listMeta }));
      return { apiVersion: groupVersionOf(kind), kind: kind.listKind, metadata: listMeta, items: found.items };
    };
    const get = async (request: GetRequest, reply: FastifyReply) => {
      const table = tableOf(request);
      const event = await getEvent(ctx.db, shape, request.params.namespace, request.params.name);
      if (!event)
        throw new HttpError(
          404,
          `${kind.group ? `events.${kind.group}` : 'events'} "${request.params.name}" not found`,
        );
      if (table) return reply.type('application/json').send(eventTable([event], { now: new Date(), ...table }));
      return event;
    };
    // Read-only: list, watch (?watch=true) or get, in the path's namespace or across all of them.
    const access = (request: FastifyRequest): Access => {
      const { namespace, name } = request.params as { namespace?: string; name?: string };
      return {
        verb: kubeVerb(request, name !== undefined),
        apiGroup: kind.group,
        resource: 'events',
        ...(namespace ? { namespace } : {}),
        ...(name ? { name } : {}),
      };
    };
    const config = { config: { access } };
    kube.get(`${prefix}/events`, config, list);
    kube.get(`${prefix}/namespaces/:namespace/events`, config, list);
    kube.get(`${prefix}/namespaces/:namespace/events/:name`, config, get);
  }
}

/** The Table kubectl asks for, if it asks for one. */
function tableOf(
  request: FastifyRequest<{ Querystring: ObjectQuery }>,
): { version: TableVersion; includeObject: IncludeObject } | null {
  const version = tableVersion(parseAccept(request.headers.accept));
  if (!version) return null;
  const includeObject = parseIncludeObject(request.query.includeObject);
  if (includeObject === null) throw new HttpError(400, 'includeObject must be None, Metadata or Object');
  return { version, includeObject };
}
