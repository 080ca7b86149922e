// A replica answered, and said no. Carries what the server said so the CLI can show the
// user which field of which document was wrong, not just the status code.
import type { ErrorBody } from '../domain/resources.js';

export type ErrorDetail = NonNullable<ErrorBody['error']['details']>[number];

export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly serverMessage: string,
    readonly details: ErrorDetail[] = [],
    readonly server?: string,
    /** A 429's Retry-After, in seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    // The message stands alone (main.ts prints only it), so the details go into it too.
    super([serverMessage, ...details.map((d) => `  ${formatDetail(d)}`)].join('\n'));
  }
}

export function formatDetail(detail: ErrorDetail, lineOffset = 0): string {
  const where = detail.path ? `${detail.path}: ` : '';
  const line = detail.line === undefined ? '' : ` (line ${detail.line + lineOffset})`;
  return `${where}${detail.message}${line}`;
}
