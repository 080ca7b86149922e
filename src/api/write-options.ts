// How a write was asked, beyond its body: whether it is a dry run, the create's Idempotency-Key
// and the user it is for. The /api/v1 routes read it from their request; the Kubernetes API's
// creates and deletes call the same write functions with their own.
import type { FastifyRequest } from 'fastify';
import { isDryRun } from './dry-run.js';
import { actorOf, idempotencyKeyOf } from './request-headers.js';
import type { UserInfo } from '../domain/rbac.js';
import type { IdempotencyClaim } from '../domain/idempotency.js';
import { idempotencyKeyTtlMs } from '../config.js';

export interface WriteOptions {
  dryRun: boolean;
  /** Read when the write takes one (a single create), so a bad key is refused only then. */
  idempotencyKey: () => IdempotencyClaim | null;
  actor: string | null;
  /** Who asks (the gate's user): an RBAC write may grant only what they hold. */
  user?: UserInfo;
}

export function writeOptionsOf(request: FastifyRequest): WriteOptions {
  return {
    dryRun: isDryRun(request),
    idempotencyKey: () => idempotencyKeyOf(request, idempotencyKeyTtlMs()),
    actor: actorOf(request),
    ...(request.user ? { user: request.user } : {}),
  };
}

/** The answer of a create or apply: 201 when it made the object, 200 when it changed or kept one. */
export interface WriteAnswer<T = unknown> {
  code: 200 | 201;
  body: T;
}
