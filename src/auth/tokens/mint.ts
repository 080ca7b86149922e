// Tokens minted with the cluster's signing key (src/auth/tokens/keys.ts): what `fencer token
// create` prints and what `fencer cluster up` will write into .fencer/kubeconfig. Each gets a
// random jti, so it can be revoked alone, and an expiry no further than MAX_TOKEN_TTL_MS.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { AUDIENCE } from './verify.js';
import type { SigningKey } from './keys.js';

/** The longest a token may live: a year. Anything meant to last longer should be rotated instead. */
export const MAX_TOKEN_TTL_MS = 366 * 24 * 3600 * 1000;

export interface TokenRequest {
  issuer: string;
  /** The token's sub: the user's name as RBAC subjects name it. */
  user: string;
  groups?: readonly string[];
  uid?: string;
  extra?: Record<string, string[]>;
  ttlMs: number;
  audience?: string;
  now?: Date;
}

export interface MintedToken {
  token: string;
  jti: string;
  expiresAt: Date;
}

export async function mintToken(key: SigningKey, request: TokenRequest): Promise<MintedToken> {
  if (request.user === '') throw new Error('a token needs a user');
  if (!Number.isFinite(request.ttlMs) || request.ttlMs <= 0 || request.ttlMs > MAX_TOKEN_TTL_MS)
    throw new Error(`a token's lifetime must be more than 0 and at most ${MAX_TOKEN_TTL_MS / 86_400_000} days`);
  const now = request.now ?? new Date();
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + Math.ceil(request.ttlMs / 1000);
  const jti = randomUUID();
  const claims: Record<string, unknown> = {};
  if (request.groups && request.groups.length > 0) claims.groups = [...new Set(request.groups)];
  if (request.uid) claims.uid = request.uid;
  if (request.extra && Object.keys(request.extra).length > 0) claims.extra = request.extra;
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(request.issuer)
    .setAudience(request.audience ?? AUDIENCE)
    .setSubject(request.user)
    .setJti(jti)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { token, jti, expiresAt: new Date(exp * 1000) };
}
