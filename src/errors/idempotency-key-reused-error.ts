/** An Idempotency-Key names an object that is gone (deleted since): the request cannot be answered with it. */
export class IdempotencyKeyReusedError extends Error {
  constructor(kind: string, key: string) {
    super(`the Idempotency-Key "${key}" was used for a ${kind.toLowerCase()} that no longer exists; use a new key`);
    this.name = 'IdempotencyKeyReusedError';
  }
}
