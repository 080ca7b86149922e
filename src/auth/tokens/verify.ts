// Bearer tokens into users. A token is a JWT signed by a key of a trusted issuer's key set:
//
//   header   alg EdDSA or ES256 (nothing else, never `none`), kid naming the key
//   claims   iss  a configured issuer (fencer's own; optionally a Kubernetes cluster's)
//            aud  "fencer"
//            sub  the user's name; groups, uid, extra as Kubernetes' UserInfo
//            exp  required; iat and nbf, when present, not in the future
//            jti  the token's id, by which it can be revoked (required of fencer's tokens)
//
// Times are checked with CLOCK_SKEW_SECONDS of leeway each way. The issuer's key set is chosen
// by the token's (unverified) `iss`, then everything is verified against that issuer alone;
// revocation is asked of `isRevoked` (the store's revoked_tokens, cached by the wiring) after
// the signature holds, so a forged token never costs a lookup.
import { statSync } from 'node:fs';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { AUTHENTICATED_GROUP, NODES_GROUP, SERVICE_ACCOUNT_PREFIX, type UserInfo } from '../../domain/rbac.js';
import { nodeIdentityOf } from '../../domain/node-identity.js';
import { UnauthorizedError } from '../../errors/unauthorized-error.js';
import { checkedJwks, readJwks, TOKEN_ALGORITHMS, type TokenAlgorithm } from './keys.js';

/** The audience every fencer token names. */
export const AUDIENCE = 'fencer';
/** The issuer of the tokens fencer mints, unless configured otherwise. */
export const DEFAULT_ISSUER = 'fencer';
/** Leeway for clocks that disagree, on exp, nbf and iat (Kubernetes allows 60 s on service-account tokens). */
export const CLOCK_SKEW_SECONDS = 60;

export type KeySet = JWTVerifyGetKey;

export interface TokenIssuer {
  issuer: string;
  keys: KeySet;
  /**
   * 'fencer': the user is the token's sub, groups, uid and extra claims, and a jti is required.
   * 'kubernetes': a Kubernetes service-account token; the user is system:serviceaccount:NS:NAME
   * from its kubernetes.io claim, in the groups Kubernetes gives service accounts.
   * 'node': a node credential the replicas minted (src/auth/node-credentials.ts): as 'fencer', but
   * nothing other than `system:node:NAME` in `system:nodes` alone, with an incarnation and a
   * generation, is taken from it.
   */
  claims?: 'fencer' | 'kubernetes' | 'node';
}

export interface VerifierOptions {
  issuers: readonly TokenIssuer[];
  audience?: string;
  clockSkewSeconds?: number;
  /** A subset of TOKEN_ALGORITHMS; anything else is refused when the verifier is made. */
  algorithms?: readonly TokenAlgorithm[];
  /** Whether the token with this id was revoked. */
  isRevoked?: (jti: string) => Promise<boolean>;
  /** The clock, for tests. */
  now?: () => Date;
}

export interface VerifiedToken {
  user: UserInfo;
  jti: string | null;
  expiresAt: Date;
}

export class TokenVerifier {
  private readonly algorithms: TokenAlgorithm[];

  constructor(private readonly options: VerifierOptions) {
    this.algorithms = [...(options.algorithms ?? TOKEN_ALGORITHMS)];
    for (const alg of this.algorithms) {
      if (!(TOKEN_ALGORITHMS as readonly string[]).includes(alg))
        throw new Error(`token algorithm ${alg} is not allowed (only ${TOKEN_ALGORITHMS.join(', ')})`);
    }
    if (options.issuers.length === 0) throw new Error('a token verifier needs at least one issuer');
  }

  /** The user a token stands for; UnauthorizedError saying why when it stands for nobody. */
  async verify(token: string): Promise<UserInfo> {
    return (await this.verifyToken(token)).user;
  }

  /** The user, and the token's id and expiry (for a cache of verified tokens, src/auth/access-control.ts). */
  async verifyToken(token: string): Promise<VerifiedToken> {
    const { alg, kid, iss } = this.peek(token);
    if (!(this.algorithms as string[]).includes(alg))
      throw new UnauthorizedError(`token algorithm "${alg}" is not accepted (only ${this.algorithms.join(', ')})`);
    if (kid === undefined) throw new UnauthorizedError('token names no key (kid)');
    const issuer = this.options.issuers.find((i) => i.issuer === iss);
    if (!issuer) throw new UnauthorizedError(`token issuer ${JSON.stringify(iss ?? null)} is not trusted`);

    const now = this.options.now?.() ?? new Date();
    const skew = this.options.clockSkewSeconds ?? CLOCK_SKEW_SECONDS;
    const kubernetes = issuer.claims === 'kubernetes';
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, issuer.keys, {
        algorithms: this.algorithms,
        issuer: issuer.issuer,
        audience: this.options.audience ?? AUDIENCE,
        clockTolerance: skew,
        currentDate: now,
        requiredClaims: kubernetes ? ['exp', 'sub'] : ['exp', 'sub', 'jti'],
      }));
    } catch (err) {
      throw new UnauthorizedError(refusal(err, kid));
    }
    if (typeof payload.iat === 'number' && payload.iat > now.getTime() / 1000 + skew)
      throw new UnauthorizedError('token issued in the future (iat)');
    if (payload.jti !== undefined) {
      if (typeof payload.jti !== 'string' || payload.jti === '')
        throw new UnauthorizedError('token jti is not a string');
      if (this.options.isRevoked && (await this.options.isRevoked(payload.jti)))
        throw new UnauthorizedError('token revoked');
    }
    const user = kubernetes ? serviceAccountUser(payload) : fencerUser(payload);
    if (issuer.claims === 'node') nodeCredentialUser(user);
    return {
      user,
      jti: typeof payload.jti === 'string' ? payload.jti : null,
      expiresAt: new Date(payload.exp! * 1000),
    };
  }

  /** The header and issuer of a token, before anything about it is trusted. */
  private peek(token: string): { alg: string; kid: string | undefined; iss: string | undefined } {
    try {
      const header = decodeProtectedHeader(token);
      const claims = decodeJwt(token);
      return {
        alg: String(header.alg),
        kid: typeof header.kid === 'string' && header.kid !== '' ? header.kid : undefined,
        iss: typeof claims.iss === 'string' ? claims.iss : undefined,
      };
    } catch {
      throw new UnauthorizedError('token is not a JWT');
    }
  }
}

function refusal(err: unknown, kid: string): string {
  if (err instanceof errors.JWTExpired) return 'token expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'token is not for this audience';
    if (err.claim === 'nbf') return 'token not valid yet (nbf)';
    return `token claim ${err.claim} ${err.reason === 'missing' ? 'missing' : 'invalid'}`;
  }
  if (err instanceof errors.JWKSNoMatchingKey) return `token signed with an unknown key (kid "${kid}")`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'token signature does not verify';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'token algorithm is not accepted';
  return 'token is not valid';
}

function fencerUser(payload: JWTPayload): UserInfo {
  const username = payload.sub;
  if (typeof username !== 'string' || username === '') throw new UnauthorizedError('token sub is not a name');
  const groups = stringList(payload.groups, 'groups');
  const extra = payload.extra === undefined ? undefined : extraOf(payload.extra);
  return {
    username,
    groups: withAuthenticated(groups),
    ...(typeof payload.uid === 'string' && payload.uid !== '' ? { uid: payload.uid } : {}),
    ...(extra && Object.keys(extra).length > 0 ? { extra } : {}),
  };
}

/** Refuses anything from the node-credential issuer that is not exactly a node credential. */
function nodeCredentialUser(user: UserInfo): void {
  const groups = user.groups.filter((g) => g !== AUTHENTICATED_GROUP);
  if (nodeIdentityOf(user) === null || groups.length !== 1 || groups[0] !== NODES_GROUP || user.uid !== undefined)
    throw new UnauthorizedError('token of the node-credential issuer is not a node credential');
}

interface KubernetesClaim {
  namespace?: unknown;
  serviceaccount?: { name?: unknown; uid?: unknown };
}

function serviceAccountUser(payload: JWTPayload): UserInfo {
  const claim = payload['kubernetes.io'] as KubernetesClaim | undefined;
  const namespace = claim?.namespace;
  const name = claim?.serviceaccount?.name;
  if (typeof namespace !== 'string' || namespace === '' || typeof name !== 'string' || name === '')
    throw new UnauthorizedError('token has no kubernetes.io service account');
  const username = `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;
  if (payload.sub !== username) throw new UnauthorizedError('token sub does not match its service account');
  const uid = claim?.serviceaccount?.uid;
  return {
    username,
    groups: withAuthenticated(['system:serviceaccounts', `system:serviceaccounts:${namespace}`]),
    ...(typeof uid === 'string' && uid !== '' ? { uid } : {}),
  };
}

function withAuthenticated(groups: string[]): string[] {
  return groups.includes(AUTHENTICATED_GROUP) ? groups : [...groups, AUTHENTICATED_GROUP];
}

function stringList(value: unknown, claim: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === ''))
    throw new UnauthorizedError(`token claim ${claim} is not a list of names`);
  return [...new Set(value as string[])];
}

function extraOf(value: unknown): Record<string, string[]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UnauthorizedError('token claim extra is not a map of lists');
  return Object.fromEntries(Object.entries(value).map(([key, list]) => [key, stringList(list, `extra.${key}`)]));
}

/** The token of an `Authorization: Bearer TOKEN` header; UnauthorizedError when there is none. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '') throw new UnauthorizedError('no bearer token (Authorization: Bearer …)');
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) throw new UnauthorizedError('Authorization is not a bearer token');
  return match[1]!;
}

/** A key set from a JWKS object (checked: public Ed25519 or P-256 keys with kids). */
export function localKeySet(jwks: unknown, where = 'JWKS'): KeySet {
  return createLocalJWKSet(checkedJwks(jwks, where));
}

/**
 * A key set read from a JWKS file, read again when the file changes (looked at no more often
 * than every `recheckMs`), so a rotation needs no restart. A file that turns unreadable keeps
 * the last good keys and throws on the next look only if none were ever read.
 */
export function fileKeySet(file: string, recheckMs = 5_000, clock: () => number = () => performance.now()): KeySet {
  let keys: KeySet | undefined;
  let seen = '';
  let lookedAt = -Infinity;
  const refresh = () => {
    if (keys !== undefined && clock() - lookedAt < recheckMs) return;
    lookedAt = clock();
    try {
      // A rewrite renames a new file over the old (a new inode), so this sees it even within one mtime tick.
      const { mtimeMs, ino, size } = statSync(file);
      const signature = `${mtimeMs}:${ino}:${size}`;
      if (signature === seen && keys !== undefined) return;
      keys = createLocalJWKSet(readJwks(file));
      seen = signature;
    } catch (err) {
      if (keys === undefined) throw err;
    }
  };
  refresh();
  return (header, token) => {
    refresh();
    return (keys as KeySet)(header, token);
  };
}

/**
 * A key set fetched from a JWKS URL (an OIDC issuer's jwks_uri, a Kubernetes cluster's
 * /openid/v1/jwks), cached and fetched again for an unknown kid at most every 30 s. Only https,
 * or http to a loopback address: keys fetched in the clear from afar could be anyone's.
 */
export function remoteKeySet(url: string): KeySet {
  const parsed = new URL(url);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback))
    throw new Error(`${url}: a JWKS URL must be https (or http on loopback)`);
  return createRemoteJWKSet(parsed, { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
}

/** A key set from a JWKS file path or URL. */
export function keySetFrom(source: string): KeySet {
  return /^https?:\/\//i.test(source) ? remoteKeySet(source) : fileKeySet(source);
}
