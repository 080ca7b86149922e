/**
 * A create's Idempotency-Key as the store keeps it (docs/security.md, "Actor and idempotency"):
 * the caller's own (another caller's same key is another key), with a hash of the body it came
 * with (the same key with another body is refused, 422), taken over once older than `ttlMs`.
 */
export interface IdempotencyClaim {
  key: string;
  /** Who asked: the token's subject (or a trusted front proxy's X-Remote-User). */
  subject: string;
  /** SHA-256 of the request's body, hex. */
  bodyHash: string;
  ttlMs: number;
}
