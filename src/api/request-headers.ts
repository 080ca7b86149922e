// Request headers that mean something to fencer's API.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../errors/http-error.js';
import type { IdempotencyClaim } from '../domain/idempotency.js';
import { INSECURE_USER } from './auth-gate.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whom the history names for this request's changes (installActor). */
    actor?: string;
  }
}

/**
 * Decides, once authenticated, who asks for the history of a user's action (a replay, a cancel):
 * the token's subject. X-Remote-User, the header an authenticating proxy sets, is believed only
 * from a caller whose subject or one of whose groups is a listed front proxy (--front-proxies),
 * or when nothing is authenticated at all (--insecure-no-auth); from anyone else it is ignored.
 */
export function installActor(app: FastifyInstance, frontProxies: readonly string[]): void {
  const proxies = new Set(frontProxies);
  app.addHook('onRequest', async (request) => {
    const user = request.user;
    if (!user) return;
    const claimed = remoteUser(request);
    const trusted =
      user === INSECURE_USER || proxies.has(user.username) || (user.groups ?? []).some((g) => proxies.has(g));
    request.actor = claimed !== null && trusted ? claimed : user.username;
  });
}

function remoteUser(request: FastifyRequest): string | null {
  const value = request.headers['x-remote-user'];
  const actor = Array.isArray(value) ? value[0] : value;
  return actor && actor.trim() !== '' ? actor.trim().slice(0, 253) : null;
}

/** Who asks, for the history (installActor decided it); null on a public route. */
export function actorOf(request: FastifyRequest): string | null {
  return request.actor ?? null;
}

/**
 * A create's Idempotency-Key, as the caller's own: a retried request with the same key and the
 * same body gets the same object; another caller's same key is another key.
 */
export function idempotencyKeyOf(request: FastifyRequest, ttlMs: number): IdempotencyClaim | null {
  const value = request.headers['idempotency-key'];
  const key = Array.isArray(value) ? value[0] : value;
  if (key === undefined || key === '') return null;
  if (key.length > 255) throw new HttpError(400, 'Idempotency-Key: at most 255 characters');
  const body = request.body;
  const bodyHash = createHash('sha256')
    .update(Buffer.isBuffer(body) ? body : String(body ?? ''))
    .digest('hex');
  return { key, subject: actorOf(request) ?? '', bodyHash, ttlMs };
}
