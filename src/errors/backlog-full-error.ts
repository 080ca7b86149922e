import { RetryLaterError } from './retry-later-error.js';

/** The cluster's backlog of jobs waiting to be placed is past its bound (FENCER_MAX_PENDING): 429, nothing stored. */
export class BacklogFullError extends RetryLaterError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, retryAfterSeconds);
    this.name = 'BacklogFullError';
  }
}
