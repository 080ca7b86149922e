/** A submit would take a namespace past its ResourceQuota's pending jobs: 429, nothing stored. */
export class QuotaExceededError extends Error {
  constructor(
    message: string,
    /** Seconds the caller should wait before trying again (the Retry-After header). */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'QuotaExceededError';
  }
}
