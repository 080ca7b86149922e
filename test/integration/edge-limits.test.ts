// Issue 27's exhaustion attacks, replayed against real replicas (docs/security.md, "Limits"): a
// caller past its request rate gets 429 (a Status, Retry-After) and writes nothing, while others
// and nodes go on; registrations with a join token have a budget per address; open watches and
// change feeds are capped per caller and per replica (429, a slot freed when a stream closes); a list without a limit is a page; YAML past its bounds
// (aliases, nesting), too many labels, too large annotations and report messages are refused
// saying what and where, with nothing stored; a large body of any kind is parsed on the worker
// thread, not the event loop, each within a time bound (413 past it; the thread is ended and the
// next body is read by a new one) and with a bounded line of bodies waiting (429 past it). The
// broken variant rate-limit runs in the suite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { TestNodes } from '../helpers/nodes.js';
import { adminFetch, bearerOf, tokenFor } from '../helpers/auth.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml } from '../helpers/jobs.js';
import type { Replica } from '../../src/replica.js';
import { DEFAULT_EDGE } from '../../src/api/edge/options.js';
import { MASTERS_GROUP } from '../../src/auth/rbac/builtin.js';
import { NODES_GROUP } from '../../src/domain/rbac.js';
import { NODE_ROUTES } from '../../src/agent-protocol/routes.js';
import { DEFAULT_PER_PAGE } from '../../src/domain/list-pages.js';
import type { ErrorBody } from '../../src/domain/resources.js';
import { OFF_LOOP_BYTES, readOffLoop } from '../../src/api/validation/off-loop.js';

const HOUR = 3_600_000;
const QUIET = { deadAfterSilentMs: HOUR, confirmTimeoutMs: HOUR };

let t: TestDatabase;
/** Rates of 3 at once, then 1 a second; watches 2 per caller, 3 in all. */
let tight: Replica;
/** The defaults. */
let roomy: Replica;

async function count(sql: string, params: unknown[] = []): Promise<number> {
  return (await t.db.query(`SELECT count(*)::int AS n FROM (${sql}) AS rows`, params)).rows[0].n;
}

const jobs = (name: string) => count('SELECT 1 FROM jobs WHERE name = $1', [name]);

async function as(replica: Replica, headers: Record<string, string>, method: string, path: string, body?: string) {
  const res = await fetch(replica.url + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/yaml' }) },
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json().catch(() => null)) as any };
}

beforeAll(async () => {
  t = await freshDatabase('edge_limits');
  tight = await startReplica(t.url, 'replica-tight', QUIET, {
    edge: {
      ...DEFAULT_EDGE,
      rate: { perSecond: 0.001, burst: 3 },
      nodeRate: { perSecond: 0.001, burst: 10 },
      maxWatchesPerCaller: 2,
      maxWatches: 3,
    },
  });
  roomy = await startReplica(t.url, 'replica-roomy', QUIET);
});

afterAll(async () => {
  await tight?.stop();
  await roomy?.stop();
  await t?.close();
});

describe('the request rate', () => {
  it('past its burst, a caller gets 429 (a Status, Retry-After) and writes nothing; another caller and a node go on', async () => {
    const rita = bearerOf(await tokenFor('rita', [MASTERS_GROUP]));
    for (let i = 0; i < 3; i++) expect((await as(tight, rita, 'GET', '/api/v1/jobs')).status).toBe(200);
    const refused = await as(tight, rita, 'POST', '/api/v1/jobs', jobYaml('rate-limited'));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    expect(refused.body.message).toContain('too many requests from rita');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await jobs('rate-limited')).toBe(0);
    const other = bearerOf(await tokenFor('sam', [MASTERS_GROUP]));
    expect((await as(tight, other, 'GET', '/api/v1/jobs')).status).toBe(200);
    // A node's budget is its own size (10 here), apart from users'.
    const node = bearerOf(await tokenFor('system:node:node-r', [NODES_GROUP]));
    for (let i = 0; i < 5; i++)
      expect((await as(tight, node, 'POST', NODE_ROUTES.heartbeat.path('node-r'))).status).not.toBe(429);
  });

  it('registrations with a join token (no user) share a budget per address: made-up tokens cannot flood the route', async () => {
    const made = { authorization: 'Bearer aaaaaa.aaaaaaaaaaaaaaaa' };
    const body = JSON.stringify({
      name: 'node-flood',
      capacity: { cpu: '1', memory: '1Gi' },
      incarnation: '6a1d3f5e-0000-4000-8000-000000000000',
    });
    const register = () =>
      fetch(tight.url + NODE_ROUTES.register.path(), {
        method: 'POST',
        body,
        headers: { ...made, 'content-type': 'application/json' },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await register()).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401)); // the node budget here: 10 at once
    expect(statuses.slice(10)).toEqual([429, 429]);
    const refused = await register();
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect(((await refused.json()) as { message: string }).message).toContain(
      'too many registrations with a join token',
    );
    expect(await count("SELECT 1 FROM nodes WHERE name = 'node-flood'")).toBe(0);
  });

  it('broken (FENCER_BREAK_GUARDS=rate-limit): the same caller is never limited', async () => {
    const una = bearerOf(await tokenFor('una', [MASTERS_GROUP]));
    process.env.FENCER_BREAK_GUARDS = 'rate-limit';
    try {
      for (let i = 0; i < 6; i++) expect((await as(tight, una, 'GET', '/api/v1/jobs')).status).toBe(200);
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
    }
  });
});

describe('open watches', () => {
  const open = async (headers: Record<string, string>, path: string) => {
    const stop = new AbortController();
    const res = await fetch(tight.url + path, { headers, signal: stop.signal });
    const body = res.status === 200 ? null : ((await res.json()) as any);
    return { status: res.status, body, close: () => stop.abort() };
  };
  const WATCH = '/apis/fencer.dev/v1/namespaces/default/jobs?watch=true';

  it('are capped per caller and per replica (429), a slot freed when a stream closes', async () => {
    // Each caller opens its streams within its burst of 3 requests.
    const wendy = bearerOf(await tokenFor('wendy', [MASTERS_GROUP]));
    const walt = bearerOf(await tokenFor('walt', [MASTERS_GROUP]));
    const xena = bearerOf(await tokenFor('xena', [MASTERS_GROUP]));
    const first = await open(wendy, WATCH);
    const second = await open(wendy, '/api/v1/changes');
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await open(wendy, WATCH);
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ kind: 'Status', reason: 'TooManyRequests' });
    expect(third.body.message).toContain('wendy already has 2 watches open');
    const walts = await open(walt, WATCH);
    expect(walts.status).toBe(200);
    const full = await open(xena, WATCH);
    expect(full.status).toBe(429);
    expect(full.body.message).toContain('this replica already serves 3 watches');
    first.close();
    // xena has one request of her burst left: the slot is free once the server saw the close.
    const roomy2 = bearerOf(await tokenFor('xena2', [MASTERS_GROUP]));
    await eventually(
      async () => {
        const again = await open(roomy2, WATCH);
        if (again.status === 200) return again;
        return null;
      },
      { what: "wendy's closed watch to free its slot" },
    ).then((again) => again.close());
    second.close();
    walts.close();
  });
});

describe('a list without a limit', () => {
  it('is a page of the default size, with a continue token to the rest', async () => {
    const many = Array.from({ length: DEFAULT_PER_PAGE + 1 }, (_, i) =>
      jobYaml(`many-${String(i).padStart(4, '0')}`, { namespace: 'many' }),
    ).join('---\n');
    const submitted = await adminFetch(`${roomy.url}/api/v1/jobs`, {
      method: 'POST',
      body: many,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(submitted.status).toBe(201);
    const first = (await (await adminFetch(`${roomy.url}/apis/fencer.dev/v1/namespaces/many/jobs`)).json()) as any;
    expect(first.items).toHaveLength(DEFAULT_PER_PAGE);
    expect(first.metadata.continue).toBeTruthy();
    const rest = (await (
      await adminFetch(`${roomy.url}/apis/fencer.dev/v1/namespaces/many/jobs?continue=${first.metadata.continue}`)
    ).json()) as any;
    expect(rest.items).toHaveLength(1);
    const v1 = (await (await adminFetch(`${roomy.url}/api/v1/namespaces/many/jobs`)).json()) as any;
    expect(v1.items).toHaveLength(DEFAULT_PER_PAGE);
  });
});

describe('a body past its bounds', () => {
  const post = async (body: string, path = '/api/v1/jobs') => {
    const res = await adminFetch(roomy.url + path, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/yaml' },
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const messages = (body: any): string => JSON.stringify(body);

  it('of YAML aliases (a bomb) is refused, and nothing stored', async () => {
    let bomb = jobYaml('bomb') + 'x-a: &a ["x","x","x","x","x","x","x","x","x"]\n';
    for (let i = 0; i < 8; i++) {
      const [from, to] = [String.fromCharCode(97 + i), String.fromCharCode(98 + i)];
      bomb += `x-${to}: &${to} [${Array(9).fill(`*${from}`).join(',')}]\n`;
    }
    const res = await post(bomb);
    expect(res.status).toBe(400);
    expect(messages(res.body)).toContain('alias expansions');
    expect(await jobs('bomb')).toBe(0);
  });

  it('nested too deep, in flow or block style, is refused saying so, and nothing stored', async () => {
    const flow = jobYaml('deep-flow').replace(
      'duration: 1s',
      `duration: 1s\n  x: ${'['.repeat(100)}${']'.repeat(100)}`,
    );
    expect(messages((await post(flow)).body)).toContain('nested deeper than 64 levels');
    let block = jobYaml('deep-block') + 'x:\n';
    for (let i = 1; i <= 70; i++) block += `${' '.repeat(i)}k:\n`;
    const res = await post(block + `${' '.repeat(71)}v: 1\n`);
    expect(res.status).toBe(400);
    expect(messages(res.body)).toContain('nested deeper than 64 levels');
    const kube = await post(flow, '/apis/fencer.dev/v1/namespaces/default/jobs');
    expect(kube.status).toBeGreaterThanOrEqual(400);
    expect(await jobs('deep-flow')).toBe(0);
    expect(await jobs('deep-block')).toBe(0);
  });

  it('with more than 64 labels or over 256 KiB of annotations is refused saying where, and nothing stored', async () => {
    const labels = Array.from({ length: 65 }, (_, i) => `    l${i}: v`).join('\n');
    const labelled = jobYaml('labelled').replace('  name: labelled\n', `  name: labelled\n  labels:\n${labels}\n`);
    const res = await post(labelled);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'metadata.labels', message: expect.stringContaining('at most 64') }),
      ]),
    );
    const annotated = jobYaml('annotated').replace(
      '  name: annotated\n',
      `  name: annotated\n  annotations:\n    a: "${'x'.repeat(300 * 1024)}"\n`,
    );
    const big = await post(annotated);
    expect(big.status).toBe(400);
    expect(messages(big.body)).toContain('FENCER_MAX_ANNOTATION_BYTES');
    expect(await jobs('labelled')).toBe(0);
    expect(await jobs('annotated')).toBe(0);
  });

  it("of a node's report with a message over 4 KiB is refused naming the report, and nothing changes", async () => {
    // The node's own credential (a join token's registration): nothing else speaks for it.
    const nodes = new TestNodes(() => roomy.url, t.db);
    expect(
      (await nodes.register({ name: 'node-m', capacity: { cpu: '1', memory: '1Gi' }, labels: { pool: 'none' } }))
        .status,
    ).toBe(200);
    const node = bearerOf(nodes.credentials.get('node-m')!);
    const before = await count('SELECT 1 FROM history');
    const res = await fetch(roomy.url + NODE_ROUTES.reports.path('node-m'), {
      method: 'POST',
      headers: { ...node, 'content-type': 'application/json' },
      body: JSON.stringify({
        reports: [
          {
            kind: 'finished',
            id: '00000000-0000-4000-8000-000000000000',
            outcome: 'Failed',
            message: 'x'.repeat(5000),
          },
        ],
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.details).toEqual([
      expect.objectContaining({ path: 'reports[0].message', message: expect.stringContaining('at most 4096') }),
    ]);
    expect(await count('SELECT 1 FROM history')).toBe(before);
  });
});

describe('a large body', () => {
  // Many annotation keys: the yaml package checks each key against the others, so this costs it
  // far longer than one turn of the event loop.
  const annotated = (name: string, keys: number) =>
    `apiVersion: fencer.dev/v1\nkind: Workflow\nmetadata:\n  name: ${name}\n  annotations:\n` +
    Array.from({ length: keys }, (_, i) => `    k${i}: v`).join('\n') +
    `\nspec:\n  jobs:\n    - name: a\n      template: { resources: { cpu: 100m, memory: 64Mi }, duration: 1s }\n`;

  it('is read on the worker thread, not the event loop, whatever kind it is', async () => {
    const text = annotated('slow', 4_000);
    expect(text.length).toBeGreaterThan(OFF_LOOP_BYTES);
    for (const reader of ['workflow', 'object'] as const) {
      let settled = false;
      const read = readOffLoop(reader, text, 'application/yaml').finally(() => (settled = true));
      // Read in place, the promise would be settled before readOffLoop returned.
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled, reader).toBe(false);
      await read;
    }
    // Small bodies are read in place.
    let small = false;
    const read = readOffLoop('object', 'a: 1', undefined).finally(() => (small = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(small).toBe(true);
    expect(await read).toEqual({ a: 1 });
  });

  it('comes back from the worker as the same answer: created, or refused naming the field', async () => {
    const post = (path: string, body: string) =>
      adminFetch(roomy.url + path, { method: 'POST', body, headers: { 'content-type': 'application/yaml' } });
    expect((await post('/api/v1/workflows', annotated('large-ok', 3_000))).status).toBe(201);
    expect(
      (await post('/apis/fencer.dev/v1/namespaces/default/workflows', annotated('large-kube', 3_000))).status,
    ).toBe(201);
    expect(await count("SELECT 1 FROM workflows WHERE name IN ('large-ok', 'large-kube')")).toBe(2);
    const labels = Array.from({ length: 65 }, (_, i) => `    l${i}: v`).join('\n');
    const refused = await post(
      '/api/v1/queues',
      `apiVersion: fencer.dev/v1\nkind: Queue\nmetadata:\n  name: big\n  namespace: default\n  labels:\n${labels}\n  annotations:\n    a: "${'x'.repeat(40 * 1024)}"\nspec: {}\n`,
    );
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('metadata.labels');
    expect(await count("SELECT 1 FROM queues WHERE name = 'big'")).toBe(0);
    const bad = await post('/apis/fencer.dev/v1/namespaces/default/queues', `a: [${'x, '.repeat(20_000)}`);
    expect(bad.status).toBe(400);
  });

  // Environment options, read at each call: set for one test, then restored.
  async function withEnv<T>(env: Record<string, string>, body: () => Promise<T>): Promise<T> {
    const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      return await body();
    } finally {
      for (const [k, v] of Object.entries(before)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  it('that outlasts its time bound is 413 and stores nothing; the next one is read by a new thread', async () => {
    const slow = annotated('too-slow', 30_000);
    const refused = await withEnv({ FENCER_BODY_READ_TIMEOUT_MS: '50' }, () =>
      adminFetch(`${roomy.url}/apis/fencer.dev/v1/namespaces/default/workflows`, {
        method: 'POST',
        body: slow,
        headers: { 'content-type': 'application/yaml' },
      }),
    );
    expect(refused.status).toBe(413);
    const status = (await refused.json()) as { kind: string; reason: string; message: string };
    expect(status).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge' });
    expect(status.message).toContain('took longer than 50 ms to read (FENCER_BODY_READ_TIMEOUT_MS)');
    expect(await count("SELECT 1 FROM workflows WHERE name = 'too-slow'")).toBe(0);
    const next = await adminFetch(`${roomy.url}/api/v1/workflows`, {
      method: 'POST',
      body: annotated('after-slow', 3_000),
      headers: { 'content-type': 'application/yaml' },
    });
    expect(next.status).toBe(201);
  });

  it('that takes more than its memory bound is 413 and stores nothing; the next one is read by a new thread', async () => {
    const jobs = Array.from({ length: 20_000 }, (_, i) => ({
      apiVersion: 'fencer.dev/v1',
      kind: 'Job',
      metadata: { name: `too-big-${i}` },
      spec: { resources: { cpu: '10m', memory: '1Mi' }, duration: '1s' },
    }));
    const refused = await withEnv({ FENCER_BODY_READ_MEMORY_MB: '8' }, () =>
      adminFetch(`${roomy.url}/api/v1/jobs`, {
        method: 'POST',
        body: JSON.stringify(jobs),
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(refused.status).toBe(413);
    const body = (await refused.json()) as ErrorBody;
    expect(body.error.message).toContain('took more than 8 MiB of memory to read (FENCER_BODY_READ_MEMORY_MB)');
    expect(await count("SELECT 1 FROM jobs WHERE name LIKE 'too-big-%'")).toBe(0);
    const next = await adminFetch(`${roomy.url}/api/v1/workflows`, {
      method: 'POST',
      body: annotated('after-big', 3_000),
      headers: { 'content-type': 'application/yaml' },
    });
    expect(next.status).toBe(201);
  });

  it('waits in a bounded line: past FENCER_MAX_QUEUED_BODIES, 429 with Retry-After and nothing read', async () => {
    const slow = annotated('queued', 30_000);
    await withEnv({ FENCER_BODY_READ_TIMEOUT_MS: '2000', FENCER_MAX_QUEUED_BODIES: '1' }, async () => {
      // The first reads, the second waits behind it, the third finds the line full.
      const reads = [0, 1, 2].map(() => readOffLoop('workflow', slow, 'application/yaml'));
      const outcomes = await Promise.allSettled(reads);
      const refused = outcomes.filter((o) => o.status === 'rejected' && (o.reason as Error).name === 'RetryLaterError');
      expect(refused).toHaveLength(1);
      expect(outcomes[2]).toMatchObject({ status: 'rejected', reason: { retryAfterSeconds: 1 } });
      expect(((outcomes[2] as PromiseRejectedResult).reason as Error).message).toContain('FENCER_MAX_QUEUED_BODIES');
    });
    // The line is empty again: a large body reads.
    expect(await readOffLoop('object', annotated('empty-line', 3_000), 'application/yaml')).toMatchObject({
      kind: 'Workflow',
    });
  });
});
