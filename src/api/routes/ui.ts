// The live dashboard every replica serves (/ui): a static page whose modules are the compiled
// src/ui/*.ts, the change feed it is pushed (/api/v1/changes, Server-Sent Events) and the cluster
// events (/api/v1/clusterevents, also `fencer get events`; /api/v1/events is the core Kubernetes
// Event list, routes/kube-events.ts). Everything else the page reads is the REST API the CLI reads.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';
import { projectRoot } from '../../paths.js';
import { listClusterEvents } from '../../store/cluster-events.js';
import { presentClusterEvent } from '../present.js';
import { API_VERSION } from '../../domain/resources.js';
import { HttpError } from '../../errors/http-error.js';
import { PUBLIC, type Access } from '../auth-gate.js';
import { onCollection } from '../route-access.js';
import { FENCER_GROUP } from '../../auth/rbac/builtin.js';

const CHANGE_FEED_ACCESS: Access[] = [
  ...['jobs', 'workflows', 'cronjobs', 'queues', 'resourcequotas', 'nodes'].map((resource) => ({
    verb: 'watch',
    apiGroup: FENCER_GROUP,
    resource,
  })),
  { verb: 'watch', apiGroup: '', resource: 'events' },
];

/** A ping at least this often while the feed reads, so a page can tell a quiet cluster from a stuck replica. */
const PING_MS = 5_000;
/** Pages one replica pushes to at once. */
const MOST_PAGES = 100;
const MOST_BUFFERED_BYTES = 1024 * 1024;
const EVENTS_SHOWN = 50;
const MOST_EVENTS = 1_000;

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

/** The files the page may load, by URL under /ui/, and where the build put each. */
export function assetPath(file: string): string | null {
  if (file === '' || file === 'index.html') return join('ui', 'index.html');
  if (file === 'style.css') return join('ui', 'style.css');
  // The page's modules, and the pure ones they share with the CLI, as tsc compiled them.
  const module = /^js\/(ui\/[a-z-]+|domain\/(?:quantity|duration|list-pages)|net\/any-replica)\.js$/.exec(file);
  return module ? `${module[1]}.js` : null;
}

export function uiRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const cache = new Map<string, Buffer>();
  const dist = join(projectRoot(), 'dist');

  app.get('/ui', { config: { access: PUBLIC } }, async (_request, reply) => reply.redirect('/ui/'));
  app.get<{ Params: { '*': string } }>('/ui/*', { config: { access: PUBLIC } }, async (request, reply) => {
    const file = request.params['*'];
    const path = assetPath(file);
    if (!path) throw new HttpError(404, `no dashboard file ${file}`);
    let body = cache.get(path);
    if (!body) {
      body = await readFile(join(dist, path)).catch(() => {
        throw new HttpError(404, `dashboard file ${path} is not built (npm run build)`);
      });
      cache.set(path, body);
    }
    reply.header('content-type', TYPES[path.split('.').at(-1)!] ?? 'application/octet-stream');
    reply.header('cache-control', 'no-cache');
    return body;
  });

  app.get<{ Querystring: { limit?: string } }>(
    '/api/v1/clusterevents',
    { config: { access: onCollection('list', 'events', undefined, '') } },
    async (request) => {
      const limit = request.query.limit === undefined ? EVENTS_SHOWN : Number(request.query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MOST_EVENTS)
        throw new HttpError(
          400,
          `limit: ${JSON.stringify(request.query.limit)} is not a whole number from 1 to ${MOST_EVENTS}`,
        );
      const rows = await listClusterEvents(ctx.db, limit);
      return { apiVersion: API_VERSION, kind: 'EventList', items: rows.map(presentClusterEvent) };
    },
  );

  // Server-Sent Events: `hello` (which replica), then a `change` for each batch of changes, and a
  // `ping` on the feed's beat at least every few seconds (none while the feed cannot read). The
  // page falls back to polling when this fails or goes quiet.
  // Every kind it names changes of, in every namespace: a watch of each at the cluster scope.
  app.get('/api/v1/changes', { config: { access: () => CHANGE_FEED_ACCESS } }, async (request, reply) => {
    if (ctx.changes.count() >= MOST_PAGES)
      throw new HttpError(503, `this replica already pushes to ${MOST_PAGES} pages; try another, or poll`);
    const origin = request.headers.origin;
    const allowed = origin !== undefined && (await ctx.origins.allows(origin).catch(() => false));
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      vary: 'Origin',
      ...(allowed ? { 'access-control-allow-origin': origin } : {}),
    });
    let pingedAt = 0;
    const send = (event: string, data: unknown) => {
      // A page that does not read its stream is dropped rather than buffered without end.
      if (res.writableLength > MOST_BUFFERED_BYTES) return void res.destroy();
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    res.write('retry: 2000\n\n');
    send('hello', { replica: ctx.replica });
    const unsubscribe = ctx.changes.subscribe({
      change: (change) => send('change', change),
      beat: () => {
        if (Date.now() - pingedAt < PING_MS) return;
        pingedAt = Date.now();
        send('ping', {});
      },
    });
    if (res.destroyed) unsubscribe();
    else res.on('close', unsubscribe);
  });
}
