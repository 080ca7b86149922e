// No replica answered at all (refused, reset, or silent past the timeout): distinct from
// ApiError because retrying later may help, while a refusal will not change.
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';

  constructor(
    readonly tried: string[],
    /** Why the last server failed (e.g. ECONNREFUSED, timeout), kept out of the message
     *  so the message stays the one scripts and users already know. */
    readonly lastCause?: string,
  ) {
    super(`cannot reach any fencer replica (tried ${tried.join(', ')})`);
  }
}
