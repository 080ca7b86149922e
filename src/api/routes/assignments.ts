// What nodes report about their assignments. Only an active assignment of that node changes;
// anything else is 409, and the node stops that job.
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';
import { jsonObject } from '../body.js';
import { HttpError } from '../../errors/http-error.js';
import { ValidationError } from '../../errors/validation-error.js';
import { injectFault } from '../faults.js';
import {
  applyReports,
  reportAbandoned,
  reportFinished,
  reportStarted,
  type NodeReport,
} from '../../store/assignments.js';

/** A node's batch: what one node has to say every few tens of milliseconds, at most. */
const MAX_REPORTS = 1000;

export function assignmentRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // Many reports in one request, each answered 'ok' or 'not-active' (then the node stops that
  // job), in order. A hundred nodes each starting thirty jobs at once are a hundred requests,
  // not three thousand.
  app.post<{ Params: { name: string } }>('/api/v1/nodes/:name/reports', async (request) => {
    const node = request.params.name;
    await injectFault('reports', node);
    const reports = parseReports(jsonObject(request.body));
    const outcomes: Array<'ok' | 'not-active'> = new Array(reports.length).fill('not-active');
    const valid = reports.flatMap((report, i) => (UUID.test(report.id) ? [{ report, i }] : []));
    const applied = await applyReports(
      ctx.db,
      node,
      valid.map((v) => v.report),
    );
    valid.forEach((v, k) => (outcomes[v.i] = applied[k] ?? 'not-active'));
    return { outcomes };
  });

  app.post<{ Params: { id: string } }>('/api/v1/assignments/:id/started', async (request) => {
    const { id } = request.params;
    const node = nodeOf(jsonObject(request.body));
    const answer = await reportStarted(ctx.db, uuidOr409(id), node);
    if (answer === 'not-active') throw stale(id, node);
    return { ok: true };
  });

  app.post<{ Params: { id: string } }>('/api/v1/assignments/:id/finished', async (request) => {
    const { id } = request.params;
    const body = jsonObject(request.body);
    const node = nodeOf(body);
    const outcome = body.outcome === 'Failed' ? 'Failed' : 'Succeeded';
    const message = typeof body.message === 'string' ? body.message : null;
    const answer = await reportFinished(ctx.db, uuidOr409(id), node, outcome, message);
    if (answer === 'not-active') throw stale(id, node);
    return { ok: true };
  });

  app.post<{ Params: { id: string } }>('/api/v1/assignments/:id/abandoned', async (request) => {
    const { id } = request.params;
    const node = nodeOf(jsonObject(request.body));
    const answer = await reportAbandoned(ctx.db, uuidOr409(id), node);
    if (answer === 'not-active') throw stale(id, node);
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

function parseReports(body: Record<string, unknown>): NodeReport[] {
  const list = body.reports;
  if (!Array.isArray(list)) throw new ValidationError([{ path: 'reports', message: 'must be an array' }]);
  if (list.length > MAX_REPORTS)
    throw new ValidationError([{ path: 'reports', message: `at most ${MAX_REPORTS} reports in one request` }]);
  const problems: Array<{ path: string; message: string }> = [];
  const reports: NodeReport[] = [];
  list.forEach((item: unknown, i) => {
    const r = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (typeof r.id !== 'string') problems.push({ path: `reports[${i}].id`, message: 'must be a string' });
    else if (r.kind === 'started') reports.push({ kind: r.kind, id: r.id });
    else if (r.kind === 'abandoned') reports.push({ kind: r.kind, id: r.id, neverRan: r.reason === 'claim-late' });
    else if (r.kind === 'finished') {
      const outcome = r.outcome === 'Failed' ? 'Failed' : 'Succeeded';
      reports.push({ kind: 'finished', id: r.id, outcome, message: typeof r.message === 'string' ? r.message : null });
    } else
      problems.push({
        path: `reports[${i}].kind`,
        message: `${JSON.stringify(r.kind)} is not one of started, finished, abandoned`,
      });
  });
  if (problems.length > 0) throw new ValidationError(problems);
  return reports;
}
