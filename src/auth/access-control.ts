// Who is asking and whether they may: what every request's gate (src/api/auth-gate.ts) asks,
// without a database round trip. The policy (Roles, ClusterRoles, bindings) and the ids of
// revoked tokens are held in memory and read again whole when they change (NOTIFY fencer_auth,
// and a new LISTEN connection, after which notifications may have been lost: src/replica.ts).
// A verified token is remembered by its text until it expires, so an agent's heartbeats and
// reports cost a map lookup, a set lookup and the pure authorizer, not a signature check each.
import type { Db } from '../store/db.js';
import { readPolicy, revokedTokens } from '../store/auth.js';
import { EMPTY_POLICY, type Decision, type Policy, type RequestAttributes, type UserInfo } from '../domain/rbac.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import { authorize } from './rbac/authorize.js';
import { TokenVerifier, type VerifierOptions } from './tokens/verify.js';

/** Verified tokens remembered at once; past it the oldest is forgotten (verified again if seen again). */
export const TOKEN_CACHE_SIZE = 10_000;

interface Remembered {
  user: UserInfo;
  jti: string | null;
  expiresAtMs: number;
}

export class AccessControl {
  private policyNow: Policy = EMPTY_POLICY;
  private revoked: ReadonlySet<string> = new Set();
  private readonly verified = new Map<string, Remembered>();
  private readonly verifier: TokenVerifier;
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly db: Db,
    options: Omit<VerifierOptions, 'isRevoked'>,
    private readonly now: () => number = Date.now,
  ) {
    // Asked only after a signature holds; the set is this replica's copy of revoked_tokens.
    this.verifier = new TokenVerifier({ ...options, isRevoked: async (jti) => this.revoked.has(jti) });
  }

  /** The policy the authorizer reads now (without the built-ins, which it adds). */
  get policy(): Policy {
    return this.policyNow;
  }

  /**
   * Reads the policy and the revocations again. Calls that come while a read runs are served by
   * one more read after it, so a change committed during a read is never missed.
   */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          const [policy, revoked] = await Promise.all([readPolicy(this.db), revokedTokens(this.db)]);
          this.policyNow = policy;
          this.revoked = new Set(revoked.map((r) => r.jti));
        } while (this.again);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  /** The user a bearer token stands for; UnauthorizedError saying why when nobody. */
  async authenticate(token: string): Promise<UserInfo> {
    return (await this.authenticated(token)).user;
  }

  /** The user a bearer token stands for and when the token expires (a node credential is renewed before). */
  async authenticated(token: string): Promise<{ user: UserInfo; expiresAtMs: number }> {
    const known = this.verified.get(token);
    if (known !== undefined) {
      if (known.expiresAtMs <= this.now()) this.verified.delete(token);
      else {
        if (known.jti !== null && this.revoked.has(known.jti)) throw new UnauthorizedError('token revoked');
        return known;
      }
    }
    const { user, jti, expiresAt } = await this.verifier.verifyToken(token);
    if (this.verified.size >= TOKEN_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    const remembered = { user, jti, expiresAtMs: expiresAt.getTime() };
    this.verified.set(token, remembered);
    return remembered;
  }

  authorize(attributes: RequestAttributes): Decision {
    return authorize(attributes, this.policyNow);
  }
}
