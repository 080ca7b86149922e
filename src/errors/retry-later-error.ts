/** A request refused for now (429 with Retry-After), nothing stored: a quota, or a backlog past its bound. */
export class RetryLaterError extends Error {
  constructor(
    message: string,
    /** Seconds the caller should wait before trying again (the Retry-After header). */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'RetryLaterError';
  }
}
