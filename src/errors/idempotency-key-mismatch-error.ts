/** An Idempotency-Key sent again with another body: not a retry of the same request (422). */
export class IdempotencyKeyMismatchError extends Error {
  constructor(key: string) {
    super(
      `the Idempotency-Key "${key}" was used with another body: a retry sends the same body; use a new key for a new request`,
    );
    this.name = 'IdempotencyKeyMismatchError';
  }
}
