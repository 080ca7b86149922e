import { RetryLaterError } from './retry-later-error.js';

/** A submit would take a namespace past its ResourceQuota's pending jobs: 429, nothing stored. */
export class QuotaExceededError extends RetryLaterError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, retryAfterSeconds);
    this.name = 'QuotaExceededError';
  }
}
