// The keys tokens are signed and verified with. One private signing key (Ed25519, or ECDSA
// P-256 for ES256) is held by whoever mints tokens: the cluster's home (`.fencer/auth/`, mode
// 0600 in a 0700 directory) or a file an operator names. The replicas hold only the public
// half, as a JWKS, and never a private key: a JWKS holding one, or a symmetric key, is refused,
// so no HS* token can ever be verified with a public key taken for a secret.
//
// Rotation: `rotateSigningKey` makes a new key and writes a JWKS holding the new public key
// and the previous ones. Tokens carry their key's id (`kid`, the key's RFC 7638 thumbprint), so
// old tokens verify until they expire; then the old public key is removed from the JWKS.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
} from 'jose';

/** The only algorithms fencer signs or accepts: never `none`, never a MAC (HS*), never RSA. */
export const TOKEN_ALGORITHMS = ['EdDSA', 'ES256'] as const;
export type TokenAlgorithm = (typeof TOKEN_ALGORITHMS)[number];

export interface SigningKey {
  kid: string;
  alg: TokenAlgorithm;
  privateKey: CryptoKey;
  /** The public half, with kid, alg and use: what goes into the JWKS. */
  publicJwk: JWK;
}

/** Where a cluster's home keeps its keys and the kubeconfig that carries its admin token. */
export interface AuthFiles {
  dir: string;
  /** The private signing key, a JWK (mode 0600). */
  signingKey: string;
  /** The public keys the replicas verify with (JWKS). */
  jwks: string;
  kubeconfig: string;
}

export function authFiles(home: string): AuthFiles {
  const dir = join(home, 'auth');
  return {
    dir,
    signingKey: join(dir, 'signing-key.json'),
    jwks: join(dir, 'jwks.json'),
    kubeconfig: join(home, 'kubeconfig'),
  };
}

/** A new key pair, as JWKs: the private one to keep secret, the public one for the JWKS. */
export async function generateSigningKey(alg: TokenAlgorithm = 'EdDSA'): Promise<{ privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const bare = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(bare);
  const publicJwk: JWK = { ...bare, kid, alg, use: 'sig' };
  return { privateJwk: { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' }, publicJwk };
}

/**
 * The signing key of a cluster's home, made (with its JWKS) when there is none yet. What
 * `fencer cluster up` calls before it starts replicas.
 */
export async function ensureSigningKey(files: AuthFiles, alg: TokenAlgorithm = 'EdDSA'): Promise<SigningKey> {
  if (!existsSync(files.signingKey)) {
    const { privateJwk, publicJwk } = await generateSigningKey(alg);
    writeSecret(files.signingKey, `${JSON.stringify(privateJwk, null, 2)}\n`);
    writePublic(files.jwks, { keys: [publicJwk] });
  }
  const key = await readSigningKey(files.signingKey);
  // A JWKS lost beside a kept key is made again from it, or no token of the key would verify.
  if (!existsSync(files.jwks)) writePublic(files.jwks, { keys: [key.publicJwk] });
  return key;
}

/**
 * A new signing key in place of the old one; the JWKS keeps the old public keys (the newest
 * `keep` of them) beside the new one, so tokens already given out verify until they expire.
 */
export async function rotateSigningKey(files: AuthFiles, keep = 1, alg: TokenAlgorithm = 'EdDSA'): Promise<SigningKey> {
  const previous = existsSync(files.jwks) ? readJwks(files.jwks).keys : [];
  const { privateJwk, publicJwk } = await generateSigningKey(alg);
  writePublic(files.jwks, { keys: [publicJwk, ...previous.slice(0, keep)] });
  writeSecret(files.signingKey, `${JSON.stringify(privateJwk, null, 2)}\n`);
  return readSigningKey(files.signingKey);
}

/** A private signing key from a JWK file (what fencer writes) or a PKCS#8 PEM file (openssl genpkey). */
export async function readSigningKey(file: string): Promise<SigningKey> {
  const text = readFileSync(file, 'utf8');
  if (text.trimStart().startsWith('-----BEGIN')) return signingKeyFromPem(text, file);
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch {
    throw new Error(`${file}: neither a JWK (JSON) nor a PEM private key`);
  }
  if (typeof jwk.d !== 'string') throw new Error(`${file}: a public key, not a private signing key`);
  const alg = algorithmOf(jwk, file);
  const { d: _d, ...bare } = jwk;
  const publicJwk = publicPart(bare);
  const kid = typeof jwk.kid === 'string' ? jwk.kid : await calculateJwkThumbprint(publicJwk);
  const privateKey = (await importJWK(jwk, alg)) as CryptoKey;
  return { kid, alg, privateKey, publicJwk: { ...publicJwk, kid, alg, use: 'sig' } };
}

async function signingKeyFromPem(pem: string, file: string): Promise<SigningKey> {
  for (const alg of TOKEN_ALGORITHMS) {
    let privateKey: CryptoKey;
    try {
      privateKey = await importPKCS8(pem, alg, { extractable: true });
    } catch {
      continue; // another curve: try the next algorithm
    }
    const publicJwk = publicPart(await exportJWK(privateKey));
    const kid = await calculateJwkThumbprint(publicJwk);
    return { kid, alg, privateKey, publicJwk: { ...publicJwk, kid, alg, use: 'sig' } };
  }
  throw new Error(`${file}: not an Ed25519 or P-256 private key in PKCS#8 PEM`);
}

/** The members of a public JWK that name the key (no private part, no metadata). */
function publicPart(jwk: JWK): JWK {
  return jwk.kty === 'EC'
    ? { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }
    : { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
}

/** The algorithm a key is for, from its type and curve; refuses any other key. */
function algorithmOf(jwk: JWK, where: string): TokenAlgorithm {
  const alg =
    jwk.kty === 'OKP' && jwk.crv === 'Ed25519' ? 'EdDSA' : jwk.kty === 'EC' && jwk.crv === 'P-256' ? 'ES256' : null;
  if (alg === null)
    throw new Error(
      `${where}: a ${jwk.kty ?? 'typeless'} key${jwk.crv ? ` on ${jwk.crv}` : ''}; only Ed25519 (EdDSA) and P-256 (ES256) keys sign fencer tokens`,
    );
  if (jwk.alg !== undefined && jwk.alg !== alg && !(alg === 'EdDSA' && jwk.alg === 'Ed25519'))
    throw new Error(`${where}: key ${jwk.kid ?? ''} says alg ${jwk.alg}, but it is a key for ${alg}`);
  return alg;
}

/**
 * A JWKS checked to hold only what verifies fencer tokens: public Ed25519 or P-256 signature
 * keys, each with a kid. Throws naming the first key that is not.
 */
export function checkedJwks(value: unknown, where: string): JSONWebKeySet {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0)
    throw new Error(`${where}: not a JWKS (no "keys" array, or it is empty)`);
  const kids = new Set<string>();
  for (const key of keys as JWK[]) {
    const at = `${where}: key ${typeof key.kid === 'string' ? `"${key.kid}"` : kids.size + 1}`;
    if (typeof key.kid !== 'string' || key.kid === '')
      throw new Error(`${at} has no kid (tokens name their key by it)`);
    if (kids.has(key.kid)) throw new Error(`${at} appears twice`);
    kids.add(key.kid);
    if (key.d !== undefined || key.k !== undefined)
      throw new Error(`${at} is a private or symmetric key: a JWKS holds public keys only`);
    if (key.use !== undefined && key.use !== 'sig') throw new Error(`${at} is for use "${key.use}", not sig`);
    algorithmOf(key, at);
  }
  return { keys: keys as JWK[] };
}

export function readJwks(file: string): JSONWebKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
  return checkedJwks(parsed, file);
}

/** Written whole or not at all (a temporary file renamed over it), readable by its owner alone. */
export function writeSecret(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600, flag: 'w' });
  chmodSync(tmp, 0o600); // a leftover tmp file would have kept its old mode
  renameSync(tmp, file);
}

/** A JWKS of public keys, written whole (a temporary file renamed over it), readable by all. */
export function writePublic(file: string, jwks: JSONWebKeySet): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(jwks, null, 2)}\n`, { mode: 0o644 });
  renameSync(tmp, file);
}
