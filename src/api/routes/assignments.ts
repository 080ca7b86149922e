// What nodes report about their assignments. Only an active assignment of that node changes;
// anything else is 409, and the node stops that job.
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';
import { jsonObject } from '../body.js';
import { HttpError } from '../../errors/http-error.js';
import { reportAbandoned, reportFinished, reportStarted } from '../../store/assignments.js';

export function assignmentRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Params: { id: string } }>('/api/v1/assignments/:id/started', async (request) => {
    const { id } = request.params;
    const node = nodeOf(jsonObject(request.body));
    const result = await reportStarted(ctx.db, uuidOr409(id), node);
    if (result.outcome === 'not-active') throw stale(id, node);
    return { ok: true };
  });

  app.post<{ Params: { id: string } }>('/api/v1/assignments/:id/finished', async (request) => {
    const { id } = request.params;
    const body = jsonObject(request.body);
    const node = nodeOf(body);
    const outcome = body.outcome === 'Failed' ? 'Failed' : 'Succeeded';
    const message = typeof body.message === 'string' ? body.message : null;
    const result = await reportFinished(ctx.db, uuidOr409(id), node, outcome, message);
    if (result.outcome === 'not-active') throw stale(id, node);
    return { ok: true };
  });

  app.post<{ Params: { id: string } }>('/api/v1/assignments/:id/abandoned', async (request) => {
    const { id } = request.params;
    const node = nodeOf(jsonObject(request.body));
    const result = await reportAbandoned(ctx.db, uuidOr409(id), node);
    if (result.outcome === 'not-active') throw stale(id, node);
    return { ok: true };
  });
}

function nodeOf(body: Record<string, unknown>): string {
  if (typeof body.node !== 'string' || body.node === '') throw new HttpError(400, 'node: required');
  return body.node;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidOr409(id: string): string {
  if (!UUID.test(id)) throw new HttpError(409, `assignment ${id} is not active`);
  return id;
}

function stale(id: string, node: string): HttpError {
  return new HttpError(409, `assignment ${id} is not active on node ${node}: stop it`);
}
