// The bearer-token verifier refuses every token it should (expired, alg none, HS256 signed with
// the public key, wrong audience or issuer, a foreign key, an unknown kid, a revoked jti) with a
// 401 that says why, and accepts tokens of both keys while a rotation is under way.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64url, SignJWT } from 'jose';
import {
  authFiles,
  ensureSigningKey,
  generateSigningKey,
  readJwks,
  readSigningKey,
  rotateSigningKey,
  type SigningKey,
} from '../../src/auth/tokens/keys.js';
import { mintToken } from '../../src/auth/tokens/mint.js';
import { bearerToken, fileKeySet, localKeySet, TokenVerifier, type KeySet } from '../../src/auth/tokens/verify.js';
import { UnauthorizedError } from '../../src/errors/unauthorized-error.js';
import { challengeHeader, statusOf } from '../../src/api/kube/status.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const HOUR = 3600_000;
let dir: string;
let key: SigningKey;
let foreign: SigningKey;
let keys: KeySet;

async function keyIn(name: string, alg: 'EdDSA' | 'ES256' = 'EdDSA'): Promise<SigningKey> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify((await generateSigningKey(alg)).privateJwk));
  return readSigningKey(file);
}

function verifier(extra: Partial<ConstructorParameters<typeof TokenVerifier>[0]> = {}, now = NOW): TokenVerifier {
  return new TokenVerifier({ issuers: [{ issuer: 'fencer', keys }], now: () => now, ...extra });
}

async function token(overrides: { ttlMs?: number; now?: Date; issuer?: string; audience?: string } = {}, k = key) {
  return mintToken(k, {
    issuer: overrides.issuer ?? 'fencer',
    user: 'alice',
    groups: ['team-a'],
    ttlMs: overrides.ttlMs ?? HOUR,
    now: overrides.now ?? NOW,
    ...(overrides.audience ? { audience: overrides.audience } : {}),
  });
}

async function refusal(verify: Promise<unknown>): Promise<string> {
  const err = await verify.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UnauthorizedError);
  return (err as Error).message;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fencer-token-'));
  key = await keyIn('key');
  foreign = await keyIn('foreign');
  keys = localKeySet({ keys: [key.publicJwk] });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('TokenVerifier', () => {
  it('accepts a valid token and returns the user, in system:authenticated', async () => {
    const { token: t } = await token();
    expect(await verifier().verify(t)).toEqual({ username: 'alice', groups: ['team-a', 'system:authenticated'] });
  });

  it('accepts an ES256 token as well', async () => {
    const es = await keyIn('es', 'ES256');
    const { token: t } = await token({}, es);
    const v = new TokenVerifier({
      issuers: [{ issuer: 'fencer', keys: localKeySet({ keys: [es.publicJwk] }) }],
      now: () => NOW,
    });
    expect((await v.verify(t)).username).toBe('alice');
  });

  it('refuses an expired token, allowing the stated clock skew', async () => {
    const { token: t } = await token({ ttlMs: HOUR });
    expect((await verifier({}, new Date(NOW.getTime() + HOUR + 30_000)).verify(t)).username).toBe('alice');
    expect(await refusal(verifier({}, new Date(NOW.getTime() + HOUR + 61_000)).verify(t))).toBe('token expired');
  });

  it('refuses a token issued in the future', async () => {
    const { token: t } = await token({ now: new Date(NOW.getTime() + 5 * 60_000) });
    expect(await refusal(verifier().verify(t))).toMatch(/future|not valid yet/);
  });

  it('refuses alg: none', async () => {
    const payload = { iss: 'fencer', aud: 'fencer', sub: 'alice', jti: 'x', exp: NOW.getTime() / 1000 + 3600 };
    const encode = (o: object) => base64url.encode(JSON.stringify(o));
    const unsigned = `${encode({ alg: 'none', kid: key.kid })}.${encode(payload)}.`;
    expect(await refusal(verifier().verify(unsigned))).toMatch(/algorithm "none" is not accepted/);
  });

  it('refuses HS256 signed with the public key as its secret', async () => {
    const payload = { iss: 'fencer', aud: 'fencer', sub: 'root', jti: 'x', exp: NOW.getTime() / 1000 + 3600 };
    const encode = (o: object) => base64url.encode(JSON.stringify(o));
    const signingInput = `${encode({ alg: 'HS256', kid: key.kid })}.${encode(payload)}`;
    const secret = JSON.stringify(key.publicJwk);
    const forged = `${signingInput}.${base64url.encode(createHmac('sha256', secret).update(signingInput).digest())}`;
    expect(await refusal(verifier().verify(forged))).toMatch(/algorithm "HS256" is not accepted/);
  });

  it('refuses a token for another audience', async () => {
    const { token: t } = await token({ audience: 'kubernetes' });
    expect(await refusal(verifier().verify(t))).toBe('token is not for this audience');
  });

  it('refuses a token of an issuer it does not trust', async () => {
    const { token: t } = await token({ issuer: 'https://evil.example' });
    expect(await refusal(verifier().verify(t))).toMatch(/issuer "https:\/\/evil.example" is not trusted/);
  });

  it('refuses a token signed by a foreign key', async () => {
    const { token: t } = await token({}, foreign);
    expect(await refusal(verifier().verify(t))).toMatch(/unknown key/);
  });

  it('refuses a foreign key that claims a known kid (the signature does not verify)', async () => {
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid })
      .setIssuer('fencer')
      .setAudience('fencer')
      .setSubject('alice')
      .setJti('j')
      .setIssuedAt(NOW.getTime() / 1000)
      .setExpirationTime(NOW.getTime() / 1000 + 3600)
      .sign(foreign.privateKey);
    expect(await refusal(verifier().verify(forged))).toBe('token signature does not verify');
  });

  it('refuses a token with an unknown kid, and one with none', async () => {
    const sign = (header: { alg: string; kid?: string }) =>
      new SignJWT({})
        .setProtectedHeader(header)
        .setIssuer('fencer')
        .setAudience('fencer')
        .setSubject('alice')
        .setJti('j')
        .setExpirationTime(NOW.getTime() / 1000 + 3600)
        .sign(key.privateKey);
    expect(await refusal(verifier().verify(await sign({ alg: 'EdDSA', kid: 'nobody' })))).toMatch(
      /unknown key \(kid "nobody"\)/,
    );
    expect(await refusal(verifier().verify(await sign({ alg: 'EdDSA' })))).toBe('token names no key (kid)');
  });

  it('refuses a revoked token, after its signature holds', async () => {
    const { token: t, jti } = await token();
    const asked: string[] = [];
    const isRevoked = async (id: string) => {
      asked.push(id);
      return id === jti;
    };
    expect(await refusal(verifier({ isRevoked }).verify(t))).toBe('token revoked');
    const { token: forged } = await token({}, foreign);
    await refusal(verifier({ isRevoked }).verify(forged));
    expect(asked).toEqual([jti]); // the forged one never reached the revocation table
  });

  it('refuses a token without a jti (it could not be revoked) or without exp', async () => {
    const sign = (claims: { jti?: string; exp?: number }) => {
      const jwt = new SignJWT({})
        .setProtectedHeader({ alg: 'EdDSA', kid: key.kid })
        .setIssuer('fencer')
        .setAudience('fencer')
        .setSubject('alice');
      if (claims.jti) jwt.setJti(claims.jti);
      if (claims.exp) jwt.setExpirationTime(claims.exp);
      return jwt.sign(key.privateKey);
    };
    expect(await refusal(verifier().verify(await sign({ exp: NOW.getTime() / 1000 + 60 })))).toBe(
      'token claim jti missing',
    );
    expect(await refusal(verifier().verify(await sign({ jti: 'j' })))).toBe('token claim exp missing');
  });

  it('refuses what is no JWT', async () => {
    expect(await refusal(verifier().verify('not-a-token'))).toBe('token is not a JWT');
  });

  it('verifies tokens of the old and the new key while a rotation is under way', async () => {
    const files = authFiles(join(dir, 'home'));
    const old = await ensureSigningKey(files);
    const { token: before } = await token({}, old);
    const fresh = await rotateSigningKey(files);
    expect(fresh.kid).not.toBe(old.kid);
    expect(readJwks(files.jwks).keys.map((k) => k.kid)).toEqual([fresh.kid, old.kid]);
    const { token: after } = await token({}, fresh);
    const v = new TokenVerifier({ issuers: [{ issuer: 'fencer', keys: fileKeySet(files.jwks, 0) }], now: () => NOW });
    expect((await v.verify(before)).username).toBe('alice');
    expect((await v.verify(after)).username).toBe('alice');
    // Once the old key leaves the JWKS, its tokens stop verifying (the key set rereads the file).
    await rotateSigningKey(files, 0);
    expect(await refusal(v.verify(before))).toMatch(/unknown key/);
  });

  it('maps a Kubernetes service-account token to system:serviceaccount:NS:NAME', async () => {
    const sa = await new SignJWT({
      'kubernetes.io': { namespace: 'ci', serviceaccount: { name: 'builder', uid: 'u-1' } },
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'k8s' })
      .setIssuer('https://kubernetes.default.svc')
      .setAudience('fencer')
      .setSubject('system:serviceaccount:ci:builder')
      .setExpirationTime(NOW.getTime() / 1000 + 600)
      .sign((await keyIn('k8s', 'ES256')).privateKey);
    const k8sKey = await readSigningKey(join(dir, 'k8s.json'));
    const v = new TokenVerifier({
      issuers: [
        { issuer: 'fencer', keys },
        {
          issuer: 'https://kubernetes.default.svc',
          keys: localKeySet({ keys: [{ ...k8sKey.publicJwk, kid: 'k8s' }] }),
          claims: 'kubernetes',
        },
      ],
      now: () => NOW,
    });
    expect(await v.verify(sa)).toEqual({
      username: 'system:serviceaccount:ci:builder',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'],
      uid: 'u-1',
    });
  });

  it('will not be configured with an algorithm outside the allow-list', () => {
    expect(() => new TokenVerifier({ issuers: [{ issuer: 'fencer', keys }], algorithms: ['HS256' as never] })).toThrow(
      /HS256 is not allowed/,
    );
  });
});

describe('key sets', () => {
  it('refuse a private or symmetric key, a key without kid, and keys that are not Ed25519 or P-256', async () => {
    const { privateJwk, publicJwk } = await generateSigningKey();
    expect(() => localKeySet({ keys: [privateJwk] })).toThrow(/private or symmetric/);
    expect(() => localKeySet({ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 's' }] })).toThrow(/private or symmetric/);
    expect(() => localKeySet({ keys: [{ ...publicJwk, kid: undefined }] })).toThrow(/no kid/);
    expect(() => localKeySet({ keys: [{ kty: 'RSA', n: 'x', e: 'AQAB', kid: 'r' }] })).toThrow(/only Ed25519/);
    expect(() => localKeySet({ keys: [] })).toThrow(/not a JWKS/);
  });

  it('write the signing key readable by its owner only', async () => {
    const files = authFiles(join(dir, 'modes'));
    await ensureSigningKey(files);
    const { statSync } = await import('node:fs');
    expect(statSync(files.signingKey).mode & 0o777).toBe(0o600);
    expect(statSync(files.dir).mode & 0o777).toBe(0o700);
    expect(readJwks(files.jwks).keys[0]!.d).toBeUndefined();
  });
});

describe('the 401', () => {
  it('reads the bearer token of an Authorization header', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(() => bearerToken(undefined)).toThrow(UnauthorizedError);
    expect(() => bearerToken('Basic YWxpY2U6cHc=')).toThrow(/not a bearer token/);
  });

  it('is a Status with reason Unauthorized and a Bearer challenge', () => {
    expect(statusOf(new UnauthorizedError('token expired'))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'token expired',
      reason: 'Unauthorized',
      code: 401,
    });
    expect(challengeHeader(false)).toEqual({ 'WWW-Authenticate': 'Bearer realm="fencer"' });
    expect(challengeHeader(true)['WWW-Authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
  });
});
