// What nodes report about their assignments (the server's side; src/api/server.ts registers it).
// Only an active assignment of that node changes; any other report is answered not-active, and
// the node stops that job.
import { maxReportMessageBytes } from '../config.js';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../api/context.js';
import { jsonObject } from '../api/body.js';
import { ValidationError } from '../errors/validation-error.js';
import { injectFault } from '../api/route-faults.js';
import { applyReports, type NodeReport } from './reports-store.js';
import { NODE_ROUTES } from './routes.js';
import { nodeIdentity, onNode, refusalOf } from './nodes-server.js';

/** A node's batch: what one node has to say every few tens of milliseconds, at most. */
const MAX_REPORTS = 1000;

export function assignmentRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // Many reports in one request, each answered 'ok' or 'not-active' (then the node stops that
  // job), in order. A hundred nodes each starting thirty jobs at once are a hundred requests,
  // not three thousand.
  app.post<{ Params: { name: string } }>(
    NODE_ROUTES.reports.route,
    { config: { access: onNode('create', 'reports') } },
    async (request) => {
      const node = request.params.name;
      const identity = nodeIdentity(request, ctx);
      await injectFault('reports', node);
      const reports = parseReports(jsonObject(request.body));
      const outcomes: Array<'ok' | 'not-active'> = new Array(reports.length).fill('not-active');
      const valid = reports.flatMap((report, i) => (UUID.test(report.id) ? [{ report, i }] : []));
      const applied = await applyReports(
        ctx.db,
        node,
        valid.map((v) => v.report),
        identity,
      ).catch((err: unknown) => {
        throw refusalOf(err);
      });
      valid.forEach((v, k) => (outcomes[v.i] = applied[k] ?? 'not-active'));
      return { outcomes };
    },
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseReports(body: Record<string, unknown>): NodeReport[] {
  const list = body.reports;
  if (!Array.isArray(list)) throw new ValidationError([{ path: 'reports', message: 'must be an array' }]);
  if (list.length > MAX_REPORTS)
    throw new ValidationError([{ path: 'reports', message: `at most ${MAX_REPORTS} reports in one request` }]);
  const problems: Array<{ path: string; message: string }> = [];
  const reports: NodeReport[] = [];
  const maxMessage = maxReportMessageBytes();
  list.forEach((item: unknown, i) => {
    const r = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (typeof r.id !== 'string') problems.push({ path: `reports[${i}].id`, message: 'must be a string' });
    else if (r.kind === 'started') reports.push({ kind: r.kind, id: r.id });
    else if (r.kind === 'abandoned') reports.push({ kind: r.kind, id: r.id, neverRan: r.reason === 'claim-late' });
    else if (r.kind === 'finished') {
      if (typeof r.message === 'string' && Buffer.byteLength(r.message) > maxMessage)
        problems.push({
          path: `reports[${i}].message`,
          message: `${Buffer.byteLength(r.message)} bytes: at most ${maxMessage} (FENCER_MAX_REPORT_MESSAGE_BYTES)`,
        });
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
