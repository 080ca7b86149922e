// Request headers that mean something to fencer's API.
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../errors/http-error.js';

/**
 * Who asks, for the history of a user's action (a replay, a retry). The header an authenticating
 * proxy in front of Kubernetes sets (X-Remote-User); fencer does no authentication of its own,
 * so it is what the client says.
 */
export function actorOf(request: FastifyRequest): string | null {
  const value = request.headers['x-remote-user'];
  const actor = Array.isArray(value) ? value[0] : value;
  return actor && actor.trim() !== '' ? actor.trim().slice(0, 253) : null;
}

/** A create's Idempotency-Key: a retried request with the same key gets the same object. */
export function idempotencyKeyOf(request: FastifyRequest): string | null {
  const value = request.headers['idempotency-key'];
  const key = Array.isArray(value) ? value[0] : value;
  if (key === undefined || key === '') return null;
  if (key.length > 255) throw new HttpError(400, 'Idempotency-Key: at most 255 characters');
  return key;
}
