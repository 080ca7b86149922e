// A replica whose API pool had no connection free in time: answered 503 so the caller tries
// another replica, and counted as shed (fencer_http_shed_total).
import { HttpError } from '../errors/http-error.js';
import { httpShed } from '../metrics/registry.js';

/** What pg's pool throws when no connection came free within its connectionTimeoutMillis. */
export const POOL_WAIT_EXCEEDED = 'timeout exceeded when trying to connect';

export const POOL_WAIT_MESSAGE = 'replica busy: no database connection free in time; try another replica';

export function isPoolWaitExceeded(error: unknown): boolean {
  return error instanceof Error && error.message === POOL_WAIT_EXCEEDED;
}

/** The 503 a pool wait is answered with (counted as shed). */
export function shedPoolWait(): HttpError {
  httpShed.inc();
  return new HttpError(503, POOL_WAIT_MESSAGE);
}
