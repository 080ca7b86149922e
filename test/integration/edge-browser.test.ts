// The browser's attacks of issue 27, replayed against a real replica (src/api/edge/browser.ts): a
// form's text/plain POST is refused 415 (a Kubernetes Status) and stores nothing; a foreign Host
// (DNS rebinding) and a foreign Origin are refused 403 before the token is looked at, while the
// replicas' own names and origins, IP addresses, loopback names and --allowed-hosts pass. The
// broken variants body-type-check and origin-check run in the suite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { ADMIN_HEADERS, adminFetch } from '../helpers/auth.js';
import { jobYaml } from '../helpers/jobs.js';
import { eventually } from '../helpers/eventually.js';
import type { Replica } from '../../src/replica.js';
import { DEFAULT_EDGE } from '../../src/api/edge/options.js';

const HOUR = 3_600_000;

let t: TestDatabase;
let replica: Replica;
let port: number;

/** A request with the headers as given, Host included (fetch would set its own). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: { ...ADMIN_HEADERS, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: Record<string, unknown> | null = null;
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function jobCount(name: string): Promise<number> {
  return Number((await t.db.query('SELECT count(*) FROM jobs WHERE name = $1', [name])).rows[0].count);
}

beforeAll(async () => {
  t = await freshDatabase('edge_browser');
  replica = await startReplica(
    t.url,
    'replica-e',
    { deadAfterSilentMs: HOUR, confirmTimeoutMs: HOUR },
    { edge: { ...DEFAULT_EDGE, allowedHosts: ['fencer.fencer.svc'] } },
  );
  port = Number(new URL(replica.url).port);
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
});

describe('a write', () => {
  it("of text/plain (a form's or a simple fetch's) is refused 415 as a Status, and stores nothing", async () => {
    const res = await raw('POST', '/api/v1/jobs', { 'content-type': 'text/plain;charset=UTF-8' }, jobYaml('plain'));
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
    expect(String(res.body?.message)).toContain('text/plain');
    expect(await jobCount('plain')).toBe(0);
  });

  it.each([
    ['application/x-www-form-urlencoded', '/api/v1/jobs'],
    ['multipart/form-data; boundary=x', '/api/v1/jobs'],
    ['text/plain', '/apis/fencer.dev/v1/namespaces/default/jobs'],
  ])('of %s to %s is refused 415', async (type, path) => {
    const res = await raw('POST', path, { 'content-type': type }, jobYaml('formed'));
    expect(res.status).toBe(415);
    expect(await jobCount('formed')).toBe(0);
  });

  it('with a body and no Content-Type is refused; without a body it needs none', async () => {
    const res = await raw('POST', '/api/v1/jobs', { 'content-length': '200' }, jobYaml('untyped').padEnd(200));
    expect(res.status).toBe(415);
    expect(await jobCount('untyped')).toBe(0);
    expect((await raw('POST', '/api/v1/namespaces/default/jobs/none/cancel', {})).status).toBe(404);
  });

  it('of YAML or JSON is taken', async () => {
    expect((await raw('POST', '/api/v1/jobs', { 'content-type': 'application/yaml' }, jobYaml('yaml'))).status).toBe(
      201,
    );
    expect(await jobCount('yaml')).toBe(1);
  });

  it('broken (FENCER_BREAK_GUARDS=body-type-check): the text/plain POST makes its job', async () => {
    process.env.FENCER_BREAK_GUARDS = 'body-type-check';
    try {
      expect((await raw('POST', '/api/v1/jobs', { 'content-type': 'text/plain' }, jobYaml('through'))).status).toBe(
        201,
      );
      expect(await jobCount('through')).toBe(1);
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
    }
  });
});

describe('the Host', () => {
  it.each(['evil.example', 'evil.example:' + '80', 'replica.attacker.test.'])(
    '%s (a name resolving to a replica: DNS rebinding) is refused 403, before the token',
    async (host) => {
      const res = await raw('GET', '/api/v1/jobs', { host });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ kind: 'Status', reason: 'Forbidden' });
      expect(String(res.body?.message)).toContain('is not a name of this cluster');
      const write = await raw('POST', '/api/v1/jobs', { host, 'content-type': 'application/yaml' }, jobYaml('rebound'));
      expect(write.status).toBe(403);
      expect(await jobCount('rebound')).toBe(0);
    },
  );

  it.each([
    '127.0.0.1',
    'localhost:1',
    'LOCALHOST',
    '[::1]:9',
    '10.1.2.3:8080',
    'fencer.fencer.svc',
    'fencer.fencer.svc.',
  ])('%s (an address, a loopback name on a loopback listener, an allowed name) is served', async (host) => {
    expect((await raw('GET', '/api/v1/jobs', { host })).status).toBe(200);
  });

  it("another replica's advertised name is served once it is in the replicas' table", async () => {
    await t.db.query("INSERT INTO replicas (name, url, seen_at) VALUES ('peer', 'http://peer.example:7070', now())");
    // The table is read again at most every 5 s: wait for the name to be learnt, never sleep.
    await eventually(async () => (await raw('GET', '/api/v1/jobs', { host: 'peer.example:7070' })).status === 200, {
      what: "the peer's name to be allowed",
      timeoutMs: 15_000,
    });
  });
});

describe('the Origin', () => {
  it("of another site's page is refused 403, read or write, and stores nothing", async () => {
    const read = await raw('GET', '/api/v1/jobs', { origin: 'https://evil.example' });
    expect(read.status).toBe(403);
    expect(String(read.body?.message)).toContain('Origin "https://evil.example" is not this cluster');
    const write = await raw(
      'POST',
      '/api/v1/jobs',
      { origin: 'https://evil.example', 'content-type': 'application/yaml' },
      jobYaml('foreign'),
    );
    expect(write.status).toBe(403);
    expect(await jobCount('foreign')).toBe(0);
    expect((await raw('GET', '/api/v1/jobs', { origin: 'null' })).status).toBe(403);
  });

  it("of the replica's own page (same host) and of another replica's is served", async () => {
    expect((await raw('GET', '/api/v1/jobs', { origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect(
      (await raw('GET', '/api/v1/jobs', { host: `localhost:${port}`, origin: `http://localhost:${port}` })).status,
    ).toBe(200);
    const res = await adminFetch(`${replica.url}/api/v1/jobs`, { headers: { origin: replica.url } });
    expect(res.status).toBe(200);
  });

  it('broken (FENCER_BREAK_GUARDS=origin-check): the foreign page is answered', async () => {
    process.env.FENCER_BREAK_GUARDS = 'origin-check';
    try {
      expect((await raw('GET', '/api/v1/jobs', { origin: 'https://evil.example' })).status).toBe(200);
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
    }
  });
});
