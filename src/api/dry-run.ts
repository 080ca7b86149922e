// dryRun=All on a write (Kubernetes' query parameter, and fencer's own routes'): the write is
// rehearsed (store/rehearsal.ts), so it is checked and answered as a real one and changes nothing.
// A write route says it can rehearse (route config `dryRun: true`); any other write route refuses
// a dry run, so no route can ignore one and make the change it was asked only to preview.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../store/db.js';
import { rehearse } from '../store/rehearsal.js';
import { HttpError } from '../errors/http-error.js';
import { isBroken } from '../testing/broken-guards.js';
import { deleteOptionsOf } from './delete-options.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's writes go through writeOrRehearse, so it honours dryRun=All. */
    dryRun?: boolean;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether the request asks for a dry run: `dryRun=All` in the query, possibly repeated, or in a
 * delete's DeleteOptions body (where kubectl puts it); any other value is 400.
 */
export function isDryRun(request: FastifyRequest): boolean {
  const raw =
    (request.query as { dryRun?: string | string[] } | undefined)?.dryRun ??
    (request.method === 'DELETE' ? deleteOptionsDryRun(request.body) : undefined);
  if (raw === undefined) return false;
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  const unsupported = values.find((v) => v !== 'All');
  if (unsupported !== undefined)
    throw new HttpError(400, `dryRun: Unsupported value: "${String(unsupported)}": supported values: "All"`);
  return true;
}

/** DeleteOptions.dryRun of a delete's body (a body that is not DeleteOptions is refused). */
function deleteOptionsDryRun(body: unknown): unknown[] | undefined {
  const dryRun = deleteOptionsOf(body)?.dryRun;
  return dryRun === undefined || dryRun === null ? undefined : Array.isArray(dryRun) ? dryRun : [dryRun];
}

/** Whether the request asked for a dry run, for its metrics: a refused dryRun value counts as asked. */
export function dryRunAsked(request: FastifyRequest): boolean {
  try {
    return WRITES.has(request.method) && isDryRun(request);
  } catch {
    return true;
  }
}

/** Refuses, before anything is read or written, a bad dryRun value and a dry run of a route that cannot rehearse. */
export function checkDryRuns(app: FastifyInstance): void {
  app.addHook('preHandler', async (request) => {
    if (!WRITES.has(request.method) || !isDryRun(request)) return;
    if (request.routeOptions.config.dryRun !== true)
      throw new HttpError(
        400,
        `dryRun is not supported by ${request.method} ${request.routeOptions.url ?? request.url}`,
      );
  });
}

/** Runs a route's write, or rehearses it when the request is a dry run. */
export function writeOrRehearse<T>(request: FastifyRequest, db: Db, write: (db: Db) => Promise<T>): Promise<T> {
  return rehearseIf(isDryRun(request), db, write);
}

/** Runs a write, or rehearses it when `dryRun` (isDryRun of the request that asked for it). */
export function rehearseIf<T>(dryRun: boolean, db: Db, write: (db: Db) => Promise<T>): Promise<T> {
  return dryRun && !isBroken('dry-run') ? rehearse(db, write) : write(db);
}

/** Route options of a write that honours dryRun=All. */
export const REHEARSABLE = { config: { dryRun: true } } as const;
