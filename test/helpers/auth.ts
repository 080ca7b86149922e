// Tokens for tests, signed with the run's key (test/helpers/global-setup.ts), which every replica a
// test starts trusts: in-process ones (startReplica) through TEST_ISSUERS, clusters of processes
// through FENCER_SIGNING_KEY. The admin token (group system:masters) is what the suite sends
// unless a test asks as someone else.
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { readSigningKey } from '../../src/auth/tokens/keys.js';
import { mintToken } from '../../src/auth/tokens/mint.js';
import { DEFAULT_ISSUER, localKeySet, type TokenIssuer } from '../../src/auth/tokens/verify.js';
import { MASTERS_GROUP } from '../../src/auth/rbac/builtin.js';

export const TEST_KEY = await readSigningKey(inject('signingKeyFile'));

/** The in-process replicas' certificate, signed by the run's CA: their ports answer https (loopback: http too). */
export const TEST_TLS = inject('servingCert')
  ? { cert: readFileSync(inject('servingCert'), 'utf8'), key: readFileSync(inject('servingKey'), 'utf8') }
  : undefined;

/** The issuer every test replica trusts: the run's key. */
export const TEST_ISSUERS: readonly TokenIssuer[] = [
  { issuer: DEFAULT_ISSUER, keys: localKeySet({ keys: [TEST_KEY.publicJwk] }) },
];

/** A token of the run's key for `user` in `groups`, valid for `ttlMs` (an hour). */
export async function tokenFor(user: string, groups: string[] = [], ttlMs = 3_600_000): Promise<string> {
  return (await mintToken(TEST_KEY, { issuer: DEFAULT_ISSUER, user, groups, ttlMs })).token;
}

export const ADMIN_TOKEN = await tokenFor('admin', [MASTERS_GROUP]);

export function bearerOf(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export const ADMIN_HEADERS = bearerOf(ADMIN_TOKEN);

/** fetch as the admin: what most tests send, authentication being on everywhere. */
export function adminFetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
  return fetch(url, {
    ...init,
    headers: { ...ADMIN_HEADERS, ...(init.headers as Record<string, string> | undefined) },
  });
}
