/**
 * A request whose credential is missing or not accepted (401 with `WWW-Authenticate: Bearer`).
 * The message says why (expired, unknown key, revoked) for the caller and the log; it never
 * echoes the token.
 */
export class UnauthorizedError extends Error {
  override readonly name = 'UnauthorizedError';

  constructor(message: string) {
    super(message);
  }
}
