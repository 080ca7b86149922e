// `fencer token create` signs with the cluster's key (or --signing-key) and what it prints is
// accepted by the verifier the replicas will run, as the user and groups asked for, for --ttl;
// the kubeconfig writer carries such a token for kubectl, in a file only its owner reads.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { authFiles, ensureSigningKey, readJwks } from '../../src/auth/tokens/keys.js';
import { localKeySet, TokenVerifier } from '../../src/auth/tokens/verify.js';
import { kubeconfigFor, writeAdminKubeconfig, writeKubeconfig } from '../../src/cli/kubeconfig.js';
import { authorize } from '../../src/auth/rbac/authorize.js';
import { EMPTY_POLICY } from '../../src/domain/rbac.js';
import { projectRoot } from '../../src/paths.js';

const run = promisify(execFile);
let home: string;

async function fencer(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code?: number; stdout: string; stderr: string }> {
  return run('node', [join(projectRoot(), 'dist/cli/main.js'), ...args], {
    env: { ...process.env, FENCER_HOME: home, ...env },
  }).catch((err: { code: number; stdout: string; stderr: string }) => err);
}

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'fencer-token-create-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('fencer token create', () => {
  it('mints a token the verifier accepts, with the user, groups and lifetime asked for', async () => {
    const files = authFiles(home);
    await ensureSigningKey(files);
    const before = Date.now();
    const out = await fencer([
      'token',
      'create',
      '--user',
      'alice',
      '--group',
      'team-a',
      '--group',
      'team-b',
      '--ttl',
      '30m',
      '-o',
      'json',
    ]);
    const { token, jti, expiresAt } = JSON.parse(out.stdout) as { token: string; jti: string; expiresAt: string };
    expect(Date.parse(expiresAt) - before).toBeGreaterThan(29 * 60_000);
    expect(Date.parse(expiresAt) - before).toBeLessThanOrEqual(31 * 60_000);
    const revoked = new Set<string>();
    const verifier = new TokenVerifier({
      issuers: [{ issuer: 'fencer', keys: localKeySet(readJwks(files.jwks)) }],
      isRevoked: async (id) => revoked.has(id),
    });
    expect(await verifier.verify(token)).toEqual({
      username: 'alice',
      groups: ['team-a', 'team-b', 'system:authenticated'],
    });
    revoked.add(jti);
    await expect(verifier.verify(token)).rejects.toThrow('token revoked');
    // Printed bare by default, for --token and scripts.
    const bare = await fencer(['token', 'create', '--user', 'bob']);
    expect(bare.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect((await verifier.verify(bare.stdout.trim())).username).toBe('bob');
  });

  it('signs with --signing-key, a PKCS#8 PEM made by anyone', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = join(home, 'es256.pem');
    writeFileSync(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const { readSigningKey } = await import('../../src/auth/tokens/keys.js');
    const key = await readSigningKey(pem);
    expect(key.alg).toBe('ES256');
    const out = await fencer([
      'token',
      'create',
      '--user',
      'ci',
      '--signing-key',
      pem,
      '--issuer',
      'https://ci.example',
    ]);
    const verifier = new TokenVerifier({
      issuers: [{ issuer: 'https://ci.example', keys: localKeySet({ keys: [key.publicJwk] }) }],
    });
    expect((await verifier.verify(out.stdout.trim())).username).toBe('ci');
  });

  it('says what is wrong: no key, a bad --ttl', async () => {
    const missing = await fencer(['token', 'create', '--user', 'a', '--signing-key', join(home, 'nope.json')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /no signing key at .*nope\.json: start a cluster \(fencer cluster up\) or pass --signing-key/,
    );
    const ttl = await fencer(['token', 'create', '--user', 'a', '--ttl', 'forever']);
    expect(ttl.stderr).toMatch(/--ttl: "forever" is not a positive duration/);
    const long = await fencer(['token', 'create', '--user', 'a', '--ttl', '9000h']);
    expect(long.stderr).toMatch(/longer than a year/);
  });
});

describe('kubeconfig with a token', () => {
  it('gives kubectl the token as the user of every context', () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigFor(['http://127.0.0.1:1', 'http://127.0.0.1:2'], { token: 'abc.def.ghi' }));
    expect(kc.getCurrentUser()?.token).toBe('abc.def.ghi');
    expect(kc.getContexts().map((c) => c.user)).toEqual(['fencer', 'fencer']);
    // Without a token, as before.
    const plain = new KubeConfig();
    plain.loadFromString(kubeconfigFor(['http://127.0.0.1:1']));
    expect(plain.getCurrentUser()?.token).toBeUndefined();
  });

  it('is written readable by its owner only, even over a file that was not', () => {
    const file = join(home, 'kubeconfig');
    writeFileSync(file, 'old', { mode: 0o644 });
    writeKubeconfig(file, ['http://127.0.0.1:1'], { token: 'abc.def.ghi' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('abc.def.ghi');
  });

  it('writes the admin kubeconfig of a cluster home: a cluster-admin token the replicas accept', async () => {
    const adminHome = join(home, 'admin-home');
    const { file } = await writeAdminKubeconfig(adminHome, ['http://127.0.0.1:7001']);
    expect(file).toBe(join(adminHome, 'kubeconfig'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(authFiles(adminHome).signingKey).mode & 0o777).toBe(0o600);
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    const verifier = new TokenVerifier({
      issuers: [{ issuer: 'fencer', keys: localKeySet(readJwks(authFiles(adminHome).jwks)) }],
    });
    const admin = await verifier.verify(kc.getCurrentUser()!.token!);
    expect(admin).toEqual({ username: 'admin', groups: ['system:masters', 'system:authenticated'] });
    const anything = { verb: 'delete', apiGroup: 'fencer.dev', resource: 'jobs', namespace: 'x', name: 'y' };
    expect(authorize({ user: admin, ...anything }, EMPTY_POLICY).allowed).toBe(true);
    // A second run keeps the key: tokens given out before still verify.
    const { kid } = readJwks(authFiles(adminHome).jwks).keys[0]!;
    await writeAdminKubeconfig(adminHome, ['http://127.0.0.1:7001']);
    expect(readJwks(authFiles(adminHome).jwks).keys.map((k) => k.kid)).toEqual([kid]);
  });
});
