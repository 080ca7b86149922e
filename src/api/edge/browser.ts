// What keeps a browser from being used against the cluster (docs/security.md, "The browser"):
//
//   Host     names this cluster (src/api/origins.ts): a page of an attacker's name that resolves
//            to a replica (DNS rebinding) is the attacker's own origin, so the browser lets it
//            read the answers; refusing foreign names closes that
//   Origin   when a browser sends one, it is the replica's own (same host) or another replica's:
//            no other site's page may have a request answered, read or write
//   a body   of a write is JSON, YAML, a Kubernetes patch type or kubectl's protobuf: a form or a
//            "simple" fetch (text/plain, form-urlencoded, multipart) needs no preflight, so a
//            foreign page could send one; these types need a preflight, which only GETs pass
//
// Tokens never travel in cookies, so a foreign page has no ambient credential; these checks stand
// even so, and for the loopback listener of --insecure-no-auth, which asks none.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ReplicaOrigins } from '../origins.js';
import { EdgeRefusal } from './refusal.js';
import { isBroken } from '../../testing/broken-guards.js';

/** The media types a write's body may have (without parameters such as charset). */
export const ACCEPTED_BODY_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
  'application/apply-patch+yaml',
  // kubectl's reviews (kubectl auth can-i)
  'application/vnd.kubernetes.protobuf',
]);

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Host and Origin, before the token is even looked at. */
export function installBrowserChecks(app: FastifyInstance, origins: ReplicaOrigins): void {
  app.addHook('onRequest', async (request) => {
    const host = request.headers.host;
    if (!(await origins.allowsHost(host)))
      throw new EdgeRefusal(
        403,
        `Host "${host}" is not a name of this cluster: its replicas' advertised names, an IP address, or one of --allowed-hosts (FENCER_ALLOWED_HOSTS)`,
      );
    const origin = request.headers.origin;
    if (origin !== undefined && !isBroken('origin-check') && !(await sameOrReplicaOrigin(origin, host, origins)))
      throw new EdgeRefusal(
        403,
        `Origin "${origin}" is not this cluster's: only pages of its replicas may use this API from a browser`,
      );
  });
}

async function sameOrReplicaOrigin(
  origin: string,
  host: string | undefined,
  origins: ReplicaOrigins,
): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file) or garbage
  }
  if (host !== undefined && url.host === host.toLowerCase()) return true;
  return origins.allows(url.origin).catch(() => false);
}

/** A write's body type; after authentication, so that a stranger learns nothing but 401. */
export function installBodyTypeCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (!WRITES.has(request.method)) return;
    const type = mediaTypeOf(request.headers['content-type']);
    if (type === undefined ? !hasBody(request) : ACCEPTED_BODY_TYPES.has(type)) return;
    if (isBroken('body-type-check')) return;
    throw new EdgeRefusal(
      415,
      `${type === undefined ? 'a body without a Content-Type' : `Content-Type "${type}"`}: a ${request.method}'s body is application/json, application/yaml or a Kubernetes patch type (${[...ACCEPTED_BODY_TYPES].filter((t) => t.includes('patch')).join(', ')})`,
    );
  });
}

function mediaTypeOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return header.split(';')[0]!.trim().toLowerCase();
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}
