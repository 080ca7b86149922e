// The one gate every request passes (docs/security.md): a bearer token, then RBAC, before any
// handler runs. Each route says in its definition what it is, as Kubernetes' request
// attributes (`config.access`: verb, API group, resource/subresource, namespace, name), or that it
// is public (PUBLIC: health, readiness, version, the dashboard's files). A route that says
// neither is refused when it is registered, so none can be added unguarded.
//
//   onRequest   authenticate: no token or a bad one is a 401 Status (reason Unauthorized,
//               WWW-Authenticate: Bearer), before the body is even read
//   preHandler  authorize every attribute set the route declares (a create may name several
//               namespaces in its documents), after the body is read and before the handler
//               touches the store: a 403 Status worded as Kubernetes words it
//
// A request for no route (404) needs a token too; it is answered 404 only once authenticated.
//
// A node's registration (a route with `config.join`) may carry a join token (`id.secret`) instead
// of a JWT: the gate only sets it aside (request.joinToken), and the registration checks it
// against the database in its own transaction. A join token anywhere else is a 401.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccessControl } from '../auth/access-control.js';
import { bearerToken } from '../auth/tokens/verify.js';
import { forbidden } from '../auth/rbac/forbidden.js';
import { MASTERS_GROUP } from '../auth/rbac/builtin.js';
import {
  AUTHENTICATED_GROUP,
  type NonResourceAttributes,
  type ResourceAttributes,
  type UserInfo,
} from '../domain/rbac.js';
import { isBroken } from '../testing/broken-guards.js';
import { parseJoinToken, type JoinToken } from '../domain/node-identity.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';

/** A request's attributes without its user: what a route declares. */
export type Access = Omit<ResourceAttributes, 'user'> | Omit<NonResourceAttributes, 'user'>;

/** Routes anyone may ask, without a token. */
export const PUBLIC = 'public';

/**
 * What a route is, for the gate: PUBLIC, or its attributes from the request (its path, query,
 * or, for a create whose documents name their namespaces, its body: see parsedBody).
 */
export type RouteAccess = typeof PUBLIC | ((request: FastifyRequest) => Access | Access[] | Promise<Access | Access[]>);

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** The route takes a join token in place of a JWT (a node's registration). */
    join?: boolean;
  }
  interface FastifyRequest {
    /** Who asks, once the gate authenticated them (absent on public routes). */
    user?: UserInfo;
    /** When the request's token expires (ms since the epoch), once authenticated. */
    tokenExpiresAtMs?: number;
    /** A join token, on a route that takes one (`config.join`), instead of a user. */
    joinToken?: JoinToken;
    /** A body read once by the route's access declaration and used again by its handler. */
    parsed?: unknown;
    /**
     * Authorizes attributes the handler learns only as it runs (a server-side apply that turns
     * out to create): a 403 Status when refused, as the gate's own check.
     */
    authorizeAlso?: (attributes: Access) => void;
  }
}

/** How requests are checked: tokens and RBAC, or nothing at all (--insecure-no-auth, loopback only). */
export type Gatekeeper = AccessControl | 'insecure-no-auth';

/** Who every request is under --insecure-no-auth: nobody checked, so everything allowed. */
export const INSECURE_USER: UserInfo = { username: 'system:anonymous', groups: [MASTERS_GROUP, AUTHENTICATED_GROUP] };

/** The route whose authorization the broken variant `authorize-before-handler` skips. */
export const UNGUARDED_WHEN_BROKEN = '/api/v1/namespaces/:namespace/jobs/:name/cancel';

/** A route as the gate saw it registered. */
export interface DeclaredRoute {
  method: string;
  url: string;
  access: RouteAccess;
}

const declared = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route of a server and what it declared (the test of the gate walks them all). */
export function declaredRoutes(app: FastifyInstance): readonly DeclaredRoute[] {
  return declared.get(app) ?? [];
}

/** Installs the gate; call before any route is registered. */
export function installAuthGate(app: FastifyInstance, gate: Gatekeeper): void {
  const routes: DeclaredRoute[] = [];
  declared.set(app, routes);
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (access === undefined)
      throw new Error(
        `route ${String(route.method)} ${route.url} declares no access (config.access: its attributes, or PUBLIC)`,
      );
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, access });
  });

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (access === PUBLIC) return;
    if (gate === 'insecure-no-auth') {
      request.user = INSECURE_USER;
      return;
    }
    const token = bearerToken(request.headers.authorization);
    const join = parseJoinToken(token);
    if (join !== null) {
      if (request.routeOptions.config.join !== true)
        throw new UnauthorizedError('a join token is only for registering a node (POST /api/v1/nodes/register)');
      request.joinToken = join;
      return;
    }
    const { user, expiresAtMs } = await gate.authenticated(token);
    request.user = user;
    request.tokenExpiresAtMs = expiresAtMs;
  });

  app.addHook('preHandler', async (request) => {
    const access = request.routeOptions.config.access;
    if (access === undefined || access === PUBLIC || gate === 'insecure-no-auth') return;
    if (isBroken('authorize-before-handler') && request.routeOptions.url === UNGUARDED_WHEN_BROKEN) return;
    if (request.joinToken) return; // checked by the registration itself, against the database
    const user = request.user!;
    const check = (attributes: Access) => {
      const asked = { ...attributes, user } as ResourceAttributes | NonResourceAttributes;
      const decision = gate.authorize(asked);
      if (!decision.allowed) throw forbidden(asked, decision.reason);
    };
    const declared = await access(request);
    for (const attributes of Array.isArray(declared) ? declared : [declared]) check(attributes);
    request.authorizeAlso = check;
  });
}

/** The body, read by `read` once per request: by the access declaration, then by the handler. */
export async function parsedBody<T>(
  request: FastifyRequest,
  read: (text: string, contentType: string | undefined) => T | Promise<T>,
): Promise<T> {
  request.parsed ??= await read(String(request.body ?? ''), request.headers['content-type']);
  return request.parsed as T;
}

/** A non-resource request for the request's path (without its query). */
export function pathAccess(verb = 'get'): (request: FastifyRequest) => Access {
  return (request) => ({ verb, path: request.url.split('?')[0]! });
}
