// Errors as Kubernetes Status objects (meta/v1), with the reason and code clients act on.
import { HttpError } from '../../errors/http-error.js';
import { ValidationError } from '../../errors/validation-error.js';
import { RetryLaterError } from '../../errors/retry-later-error.js';
import { SessionLostError } from '../../errors/session-lost-error.js';
import { UnauthorizedError } from '../../errors/unauthorized-error.js';
import { ForbiddenError } from '../../errors/forbidden-error.js';

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
  details?: {
    causes?: Array<{ reason: string; message: string; field: string }>;
    retryAfterSeconds?: number;
    /** A 403's target, as Kubernetes fills them: the API group, the resource (as `kind`) and the name. */
    group?: string;
    kind?: string;
    name?: string;
  };
}

/**
 * What a 401 answers with besides its Status: kubectl then says "You must be logged in to the
 * server". RFC 6750: a token that was sent but refused is an invalid_token.
 */
export function challengeHeader(tokenSent: boolean): Record<string, string> {
  return { 'WWW-Authenticate': tokenSent ? 'Bearer realm="fencer", error="invalid_token"' : 'Bearer realm="fencer"' };
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  503: 'ServiceUnavailable',
};

/** A refusal with the reason Kubernetes gives it where the code alone does not say (AlreadyExists). */
export class KubeError extends HttpError {
  constructor(
    statusCode: number,
    readonly reason: string,
    message: string,
    /** A 429's or 503's Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(statusCode, message);
  }
}

export function statusOf(thrown: unknown): Status {
  const err = thrown instanceof Error ? thrown : new Error(String(thrown));
  const base = {
    kind: 'Status' as const,
    apiVersion: 'v1' as const,
    metadata: {},
    status: 'Failure' as const,
    message: err.message,
  };
  if (err instanceof KubeError)
    return {
      ...base,
      reason: err.reason,
      code: err.statusCode,
      ...(err.retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds: err.retryAfterSeconds } }),
    };
  if (err instanceof UnauthorizedError) return { ...base, reason: 'Unauthorized', code: 401 };
  if (err instanceof ForbiddenError) {
    const { group, resource, name } = err.target;
    return { ...base, reason: 'Forbidden', code: 403, details: { ...(name ? { name } : {}), group, kind: resource } };
  }
  if (err instanceof ValidationError) {
    return {
      ...base,
      reason: 'Invalid',
      code: 422,
      details: { causes: err.details.map((d) => ({ reason: 'FieldValueInvalid', message: d.message, field: d.path })) },
    };
  }
  if (err instanceof RetryLaterError)
    return { ...base, reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: err.retryAfterSeconds } };
  if (err instanceof SessionLostError)
    return { ...base, reason: 'ServiceUnavailable', code: 503, details: { retryAfterSeconds: 1 } };
  const code =
    err instanceof HttpError
      ? err.statusCode
      : typeof (err as { statusCode?: unknown }).statusCode === 'number'
        ? (err as unknown as { statusCode: number }).statusCode
        : 500;
  return { ...base, reason: REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'), code };
}
