// The gate every request passes (src/api/auth-gate.ts), walked route by route from the server's
// own route table: each route declares its attributes or is public; without a token, or with an
// expired one, an `alg: none` one, one for another audience, one signed by a foreign key or a
// revoked one, every route but the public ones answers 401 as a Kubernetes Status with
// `WWW-Authenticate: Bearer`; `fencer token revoke` revokes by id; and --insecure-no-auth is
// refused off loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { ADMIN_TOKEN, bearerOf, TEST_ISSUERS, TEST_KEY, tokenFor } from '../helpers/auth.js';
import { eventually } from '../helpers/eventually.js';
import type { Replica } from '../../src/replica.js';
import { buildServer } from '../../src/api/server.js';
import { declaredRoutes, PUBLIC } from '../../src/api/auth-gate.js';
import { DEFAULT_EDGE } from '../../src/api/edge/options.js';
import type { ApiContext } from '../../src/api/context.js';
import { AccessControl } from '../../src/auth/access-control.js';
import { generateSigningKey, readSigningKey, writeSecret } from '../../src/auth/tokens/keys.js';
import { mintToken } from '../../src/auth/tokens/mint.js';
import { DEFAULT_ISSUER } from '../../src/auth/tokens/verify.js';
import { revokeToken } from '../../src/store/auth.js';
import { isLoopbackHost } from '../../src/cli/replica.js';
import { projectRoot } from '../../src/paths.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Fastify from 'fastify';
import { installAuthGate } from '../../src/api/auth-gate.js';
import { KUBECTL, kubectlAgainst } from '../helpers/kubectl.js';

// Besides these, the CORS preflight (OPTIONS /*), which carries no credentials and grants nothing.
const PUBLIC_PATHS = ['/healthz', '/readyz', '/version', '/ui', '/ui/*', '/*'];

let t: TestDatabase;
let replica: Replica;

beforeAll(async () => {
  t = await freshDatabase('auth_gate');
  replica = await startReplica(t.url);
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
});

/** The server's routes, as buildServer registers them (no request is served by this instance). */
function routeTable() {
  const app = buildServer({ edge: DEFAULT_EDGE } as ApiContext, new AccessControl(t.db, { issuers: TEST_ISSUERS }));
  return app.ready().then(() => declaredRoutes(app));
}

/** A concrete path for a route pattern. */
function pathOf(url: string): string {
  return url
    .replace(':namespace', 'a')
    .replace(':name', 'x')
    .replace(':group', 'fencer.dev')
    .replace(':version', 'v1')
    .replace(':plural', 'jobs')
    .replace('*', 'index.html');
}

function algNone(): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', kid: TEST_KEY.kid })}.${part({ iss: DEFAULT_ISSUER, aud: 'fencer', sub: 'admin', groups: ['system:masters'], jti: 'x', iat: now, exp: now + 600 })}.`;
}

describe('every route', () => {
  it('declares its attributes or is public, and only health, readiness, version and the dashboard files are public', async () => {
    const routes = await routeTable();
    expect(routes.length).toBeGreaterThan(60);
    for (const route of routes) {
      expect(route.access === PUBLIC || typeof route.access === 'function', `${route.method} ${route.url}`).toBe(true);
      if (route.access === PUBLIC) expect(PUBLIC_PATHS, `${route.method} ${route.url}`).toContain(route.url);
    }
    expect(routes.filter((r) => r.access === PUBLIC).map((r) => r.url)).toEqual(expect.arrayContaining(PUBLIC_PATHS));
  });

  it('cannot be added without declaring what it is', async () => {
    const app = Fastify();
    installAuthGate(app, 'insecure-no-auth');
    expect(() => app.get('/api/v1/secret', async () => 'everything')).toThrow(/declares no access/);
  });

  it('answers 401 (a Status, WWW-Authenticate: Bearer) without a valid token, but for the public ones', async () => {
    const other = await readSigningKey(
      await (async () => {
        const dir = mkdtempSync(join(tmpdir(), 'fencer-foreign-'));
        const file = join(dir, 'key.json');
        writeSecret(file, JSON.stringify((await generateSigningKey()).privateJwk));
        return file;
      })(),
    );
    const expired = (
      await mintToken(TEST_KEY, {
        issuer: DEFAULT_ISSUER,
        user: 'admin',
        groups: ['system:masters'],
        ttlMs: 60_000,
        now: new Date(Date.now() - 3_600_000),
      })
    ).token;
    const wrongAudience = (
      await mintToken(TEST_KEY, {
        issuer: DEFAULT_ISSUER,
        user: 'admin',
        groups: ['system:masters'],
        ttlMs: 60_000,
        audience: 'kubernetes',
      })
    ).token;
    const foreign = (
      await mintToken(other, { issuer: DEFAULT_ISSUER, user: 'admin', groups: ['system:masters'], ttlMs: 60_000 })
    ).token;
    const credentials: Array<[string, Record<string, string>]> = [
      ['no token', {}],
      ['an expired token', bearerOf(expired)],
      ['alg none', bearerOf(algNone())],
      ['another audience', bearerOf(wrongAudience)],
      ['a foreign key', bearerOf(foreign)],
      ['not a bearer token', { authorization: 'Basic YWRtaW46YWRtaW4=' }],
    ];
    const routes = await routeTable();
    for (const route of routes) {
      const path = pathOf(route.url);
      for (const [what, headers] of credentials) {
        const res = await fetch(replica.url + path, {
          method: route.method,
          headers: { ...headers, 'content-type': 'application/json' },
          ...(['POST', 'PUT', 'PATCH'].includes(route.method) ? { body: '{}' } : {}),
          signal: AbortSignal.timeout(5000),
        });
        const where = `${route.method} ${path} with ${what}`;
        if (route.access === PUBLIC) {
          expect(res.status, where).not.toBe(401);
          await res.body?.cancel();
          continue;
        }
        expect(res.status, where).toBe(401);
        expect(res.headers.get('www-authenticate'), where).toMatch(/^Bearer realm="fencer"/);
        if (route.method !== 'HEAD')
          expect(await res.json(), where).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
      }
    }
  });

  it.skipIf(!KUBECTL)(
    'refuses real kubectl without a valid token, which then says to log in; with one it works',
    async () => {
      const home = mkdtempSync(join(tmpdir(), 'fencer-auth-gate-kubectl-'));
      try {
        const without = kubectlAgainst(
          () => replica.url,
          () => home,
          // Not a token the replica gave: without any, kubectl waits on its stdin for a login.
          () => 'not-a-token',
        );
        const refused = await without('get', 'fj', '-n', 'a');
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toContain('You must be logged in to the server');
        expect(
          (
            await kubectlAgainst(
              () => replica.url,
              () => home,
            )('get', 'fj', '-n', 'a')
          ).code,
        ).toBe(0);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it('answers 401 for a path no route serves, unless authenticated (then 404)', async () => {
    expect((await fetch(`${replica.url}/api/v1/nothing`)).status).toBe(401);
    expect((await fetch(`${replica.url}/api/v1/nothing`, { headers: bearerOf(ADMIN_TOKEN) })).status).toBe(404);
  });

  it('refuses a revoked token once the replica hears of it (NOTIFY fencer_auth), without a database read per request', async () => {
    const minted = await mintToken(TEST_KEY, {
      issuer: DEFAULT_ISSUER,
      user: 'admin',
      groups: ['system:masters'],
      ttlMs: 600_000,
    });
    const ask = () => fetch(`${replica.url}/api/v1/jobs`, { headers: bearerOf(minted.token) });
    expect((await ask()).status).toBe(200);
    await revokeToken(t.db, { jti: minted.jti, expiresAt: minted.expiresAt, actor: 'test', reason: 'stolen' });
    await eventually(async () => (await ask()).status === 401, { what: 'the revoked token refused' });
    expect(await (await ask()).json()).toMatchObject({ reason: 'Unauthorized', message: 'token revoked' });
  });

  it('revokes a token by its id or as a whole with `fencer token revoke`', async () => {
    const mint = () =>
      mintToken(TEST_KEY, { issuer: DEFAULT_ISSUER, user: 'carol', groups: ['system:masters'], ttlMs: 600_000 });
    const [byId, whole] = [await mint(), await mint()];
    const ask = (token: string) => fetch(`${replica.url}/api/v1/jobs`, { headers: bearerOf(token) });
    expect((await ask(byId.token)).status).toBe(200);
    expect((await ask(whole.token)).status).toBe(200);
    const revoke = async (...args: string[]) =>
      (
        await promisify(execFile)(process.execPath, [
          join(projectRoot(), 'dist/cli/main.js'),
          'token',
          'revoke',
          ...args,
          '--database-url',
          t.url,
        ])
      ).stdout;
    expect(await revoke(byId.jti, '--reason', 'leaked')).toBe(`token "${byId.jti}" revoked\n`);
    expect(await revoke(whole.token)).toBe(`token "${whole.jti}" revoked\n`);
    expect(await revoke(byId.jti)).toBe(`token "${byId.jti}" was already revoked\n`);
    const { rows } = await t.db.query(
      'SELECT jti, expires_at, reason FROM revoked_tokens WHERE jti = ANY($1) ORDER BY reason NULLS LAST',
      [[byId.jti, whole.jti]],
    );
    expect(rows.map((r) => [r.jti, r.reason])).toEqual([
      [byId.jti, 'leaked'],
      [whole.jti, null],
    ]);
    // The whole token's own expiry is kept; an id alone is kept as long as any token can live.
    expect(new Date(rows[1].expires_at).getTime()).toBe(Math.floor(whole.expiresAt.getTime() / 1000) * 1000);
    expect(new Date(rows[0].expires_at).getTime()).toBeGreaterThan(byId.expiresAt.getTime());
    await eventually(async () => (await ask(byId.token)).status === 401 && (await ask(whole.token)).status === 401, {
      what: 'both revoked tokens refused',
    });
  });
});

describe('the cost of the gate', () => {
  it('authenticates a token it has seen by a map lookup (printed, never asserted)', async () => {
    const control = new AccessControl(t.db, { issuers: TEST_ISSUERS });
    await control.reload();
    const token = await tokenFor('system:node:node-1', ['system:nodes']);
    await control.authenticate(token);
    const n = 20_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const user = await control.authenticate(token);
      control.authorize({
        user,
        verb: 'create',
        apiGroup: 'fencer.dev',
        resource: 'nodes',
        subresource: 'reports',
        name: 'node-1',
        node: 'node-1',
      });
    }
    const micros = Number(process.hrtime.bigint() - start) / 1000 / n;
    process.stdout.write(`gate: ${micros.toFixed(2)} µs per request (authenticate a seen token + authorize)\n`);
  });
});

describe('--insecure-no-auth', () => {
  it('is for loopback addresses only', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '10.0.0.1', '::', 'example.com']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('is refused by `fencer replica` on a non-loopback address, saying why', async () => {
    const error = await promisify(execFile)(
      process.execPath,
      [
        join(projectRoot(), 'dist/cli/main.js'),
        'replica',
        '--name',
        'r',
        '--host',
        '0.0.0.0',
        '--port',
        '1',
        '--database-url',
        t.url,
        '--insecure-no-auth',
      ],
      { timeout: 30_000 },
    ).then(
      () => null,
      (err: { stderr?: string; code?: number }) => err,
    );
    expect(error?.code).not.toBe(0);
    expect(error?.stderr).toMatch(/--insecure-no-auth: refused on 0\.0\.0\.0/);
  });

  it('lets anyone do anything on loopback', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fencer-insecure-'));
    try {
      const { Replica } = await import('../../src/replica.js');
      const { DEFAULT_TIMINGS } = await import('../../src/config.js');
      const { freePort } = await import('../../src/net/free-port.js');
      const pino = (await import('pino')).default;
      const open = new Replica({
        name: 'replica-open',
        host: '127.0.0.1',
        port: await freePort(),
        databaseUrl: t.url,
        timings: DEFAULT_TIMINGS,
        logger: pino({ level: 'silent' }),
        auth: 'insecure-no-auth',
      });
      await open.start();
      try {
        expect((await fetch(`${open.url}/api/v1/jobs`)).status).toBe(200);
      } finally {
        await open.stop();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
