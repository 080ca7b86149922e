// The HTTP API every replica serves (fastify). Bodies are read as text, whatever the content
// type, so YAML and JSON errors can name a line; errors all have one shape (ErrorBody).
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Status } from './kube/status.js';
import type { ApiContext } from './context.js';
import { ValidationError } from '../errors/validation-error.js';
import { HttpError } from '../errors/http-error.js';
import { jobRoutes } from './routes/jobs.js';
import { nodeRoutes } from '../agent-protocol/nodes-server.js';
import { RetryLaterError } from '../errors/retry-later-error.js';
import { SessionLostError } from '../errors/session-lost-error.js';
import { IdempotencyKeyReusedError } from '../errors/idempotency-key-reused-error.js';
import { workflowRoutes } from './routes/workflows.js';
import { queueRoutes } from './routes/queues.js';
import { cronJobRoutes } from './routes/cronjobs.js';
import { assignmentRoutes } from '../agent-protocol/reports-server.js';
import { statusRoutes } from './routes/status.js';
import { kubeRoutes } from './routes/kube.js';
import { checkDryRuns, dryRunAsked } from './dry-run.js';
import { uiRoutes } from './routes/ui.js';
import type { ErrorBody } from '../domain/resources.js';
import { httpRequestSeconds, httpRequests, httpShed } from '../metrics/registry.js';
import { isPoolWaitExceeded, POOL_WAIT_MESSAGE } from './pool-wait.js';
import { installAuthGate, PUBLIC, type Gatekeeper } from './auth-gate.js';
import { dualProtocolServer, type ServingCert } from './dual-protocol.js';
import { PROTOBUF_CONTENT_TYPE } from './kube/protobuf.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import { ForbiddenError } from '../errors/forbidden-error.js';
import { challengeHeader, KubeError, statusOf } from './kube/status.js';
import { EdgeRefusal } from './edge/refusal.js';
import { installActor } from './request-headers.js';
import { installLimits } from './edge/limits.js';
import { IdempotencyKeyMismatchError } from '../errors/idempotency-key-mismatch-error.js';
import { installBodyTypeCheck, installBrowserChecks } from './edge/browser.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * A 401, a 403, the edge's refusals (src/api/edge/) or an Idempotency-Key sent with another body
 * (422) as a Kubernetes Status, on every route (kubectl reads them from /api/v1 too), with
 * the challenge a 401 carries; null for any other error.
 */
export function refusalOf(err: Error, request: FastifyRequest, reply: FastifyReply): Status | null {
  if (err instanceof IdempotencyKeyMismatchError) return statusOf(new KubeError(422, 'Invalid', err.message));
  if (!(err instanceof UnauthorizedError) && !(err instanceof ForbiddenError) && !(err instanceof EdgeRefusal))
    return null;
  if (err instanceof UnauthorizedError)
    void reply.headers(challengeHeader(request.headers.authorization !== undefined));
  if (err instanceof EdgeRefusal && err.retryAfterSeconds !== undefined)
    void reply.header('Retry-After', String(err.retryAfterSeconds));
  return statusOf(err);
}

/** With `tls`, the port answers HTTPS, and plain HTTP only where `tls.plainHttp` says (src/api/dual-protocol.ts). */
export function buildServer(ctx: ApiContext, gate: Gatekeeper, tls?: ServingCert): FastifyInstance {
  const app = Fastify({
    bodyLimit: BODY_LIMIT_BYTES,
    logger: false,
    forceCloseConnections: true,
    ...(tls ? { serverFactory: dualProtocolServer(tls) } : {}),
  }) as unknown as FastifyInstance;
  installBrowserChecks(app, ctx.origins);
  installAuthGate(app, gate);
  installActor(app, ctx.edge.frontProxies);
  installLimits(app, ctx.edge);
  installBodyTypeCheck(app);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  // kubectl's reviews (kubectl auth can-i) come as protobuf: bytes, not text.
  app.addContentTypeParser(PROTOBUF_CONTENT_TYPE, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.setErrorHandler((thrown, request, reply) => {
    const err = thrown instanceof Error ? thrown : new Error(String(thrown));
    const refusal = refusalOf(err, request, reply);
    if (refusal) return void reply.code(refusal.code).send(refusal);
    const body: ErrorBody = { error: { message: err.message } };
    let status = 500;
    if (err instanceof ValidationError) {
      status = 400;
      body.error.details = err.details;
    } else if (err instanceof HttpError) {
      status = err.statusCode;
    } else if (err instanceof IdempotencyKeyReusedError) {
      status = 409;
    } else if (err instanceof RetryLaterError) {
      status = 429;
      void reply.header('Retry-After', String(err.retryAfterSeconds));
    } else if (err instanceof SessionLostError) {
      // Nothing of the request was written: the caller sends it again (the same Idempotency-Key).
      status = 503;
      void reply.header('Retry-After', '1');
    } else if (isPoolWaitExceeded(err)) {
      // The replica is too busy to reach the database in time: the caller should try another.
      status = 503;
      httpShed.inc();
      body.error.message = POOL_WAIT_MESSAGE;
    } else if (typeof (err as { statusCode?: number }).statusCode === 'number') {
      status = (err as unknown as { statusCode: number }).statusCode;
      if ((err as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        body.error.message = `request body is larger than ${BODY_LIMIT_BYTES} bytes`;
      }
    }
    if (status >= 500)
      ctx.logger.error(
        {
          reqId: request.id,
          err: { message: err.message, code: (err as { code?: string }).code, stack: err.stack },
          method: request.method,
          url: request.url,
          status,
        },
        'request failed',
      );
    reply.code(status).send(body);
  });

  // By route pattern, so a job's name does not make a series of its own. The access log is at
  // debug level (FENCER_LOG_LEVEL=debug): agents' heartbeats and reports make many a second.
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    httpRequests.inc({
      method: request.method,
      route,
      code: String(reply.statusCode),
      dry_run: String(dryRunAsked(request)),
    });
    httpRequestSeconds.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    if (ctx.logger.isLevelEnabled('debug'))
      ctx.logger.debug(
        {
          reqId: request.id,
          method: request.method,
          url: request.url,
          route,
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request',
      );
  });

  // A dashboard served by one replica reads from the others when that one dies: GETs answer
  // pages from the replicas' own origins (src/api/origins.ts), and no other site's.
  app.addHook('onSend', async (request, reply) => {
    const origin = request.headers.origin;
    if (request.method !== 'GET' || !origin) return;
    void reply.header('vary', 'Origin');
    if (await ctx.origins.allows(origin).catch(() => false)) void reply.header('access-control-allow-origin', origin);
  });

  // The preflight a page of another replica's origin sends before a GET with its token (the
  // Authorization header is not a simple one). It carries no credentials, so it is public, and it
  // allows only GETs with that header, only for the replicas' own origins.
  app.options('/*', { config: { access: PUBLIC } }, async (request, reply) => {
    const origin = request.headers.origin;
    if (origin && (await ctx.origins.allows(origin).catch(() => false)))
      void reply.headers({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'authorization, accept',
        'access-control-max-age': '600',
        vary: 'Origin',
      });
    return reply.code(204).send();
  });

  app.setNotFoundHandler((request, reply) => {
    const body: ErrorBody = { error: { message: `no route for ${request.method} ${request.url}` } };
    reply.code(404).send(body);
  });

  checkDryRuns(app);
  jobRoutes(app, ctx);
  nodeRoutes(app, ctx);
  workflowRoutes(app, ctx);
  queueRoutes(app, ctx);
  cronJobRoutes(app, ctx);
  assignmentRoutes(app, ctx);
  statusRoutes(app, ctx);
  kubeRoutes(app, ctx);
  uiRoutes(app, ctx);
  return app;
}
