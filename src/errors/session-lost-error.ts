/**
 * The database session ended inside a transaction before COMMIT was sent, so the server rolled
 * the whole transaction back: nothing of it was written, and it may be sent again (503 with
 * Retry-After). Once COMMIT is sent, a lost answer leaves the outcome unknown: not this error.
 */
export class SessionLostError extends Error {
  constructor(readonly lost: Error) {
    super(`the database session ended inside a transaction, which was rolled back: ${lost.message}`);
    this.name = 'SessionLostError';
  }
}
