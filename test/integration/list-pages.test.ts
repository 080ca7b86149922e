// Every /api/v1 list but jobs' (job-pages.test) a page at a time, as jobs are: workflows, CronJobs,
// queues, ResourceQuotas and nodes, in one namespace and across them: the pages of a list join
// to exactly its objects, none twice, none missing; no limit is a page of 500 and a limit above
// 1,000 is served 1,000 (1,100 queues in one namespace); a bad limit, or a continue token that is
// not one or belongs to another namespace's list, is 400. The Kubernetes lists of those kinds
// and of core namespaces page the same way, and the fencer CLI lists every object.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { adminFetch } from '../helpers/auth.js';
import { workflowYaml } from '../helpers/workflows.js';
import { projectRoot } from '../../src/paths.js';
import type { Replica } from '../../src/replica.js';

let t: TestDatabase;
let replica: Replica;

const BULK = 1_100; // more than the largest page

async function call(method: string, path: string, body?: string) {
  const res = await adminFetch(replica.url + path, {
    method,
    body,
    headers: body === undefined ? {} : { 'content-type': 'application/yaml' },
  });
  return { status: res.status, body: (await res.json()) as any };
}

const keyOf = (o: any) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const sorted = (keys: string[]) => [...keys].sort();

/** Every page of a list with this limit: the keys of each page. */
async function pages(path: string, limit: number | null): Promise<string[][]> {
  const base = `${path}${path.includes('?') ? '&' : '?'}${limit === null ? '' : `limit=${limit}`}`;
  const read: string[][] = [];
  for (let next: string | undefined = base; next !== undefined;) {
    const { status, body } = await call('GET', next);
    expect(status, JSON.stringify(body)).toBe(200);
    read.push(body.items.map(keyOf));
    next = body.metadata.continue ? `${base}&continue=${encodeURIComponent(body.metadata.continue)}` : undefined;
  }
  return read;
}

/** Every object of a kind, from the table, as namespace/name. */
async function rows(table: string, namespaced = true): Promise<string[]> {
  const key = namespaced ? "namespace || '/' || name" : "'/' || name";
  return (await t.db.query<{ key: string }>(`SELECT ${key} AS key FROM ${table}`)).rows.map((r) => r.key);
}

const cron = (name: string, namespace: string) =>
  `apiVersion: fencer.dev/v1\nkind: CronJob\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  schedule: "0 0 1 1 *"\n  jobTemplate:\n    spec:\n      resources: { cpu: 100m, memory: 64Mi }\n      duration: 1h\n`;
const quota = (namespace: string) =>
  `apiVersion: fencer.dev/v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: ${namespace}\nspec:\n  hard: { cpu: "8" }\n`;

beforeAll(async () => {
  t = await freshDatabase('list_pages');
  replica = await startReplica(t.url, 'replica-l');
  for (const namespace of ['a', 'b', 'c']) {
    for (const name of ['w1', 'w2', 'w3'])
      expect((await call('POST', '/api/v1/workflows', workflowYaml(name, [{ name: 'x' }], { namespace }))).status).toBe(
        201,
      );
    for (const name of ['c1', 'c2', 'c3'])
      expect((await call('POST', '/api/v1/cronjobs', cron(name, namespace))).status).toBe(201);
    expect((await call('POST', '/api/v1/resourcequotas', quota(namespace))).status).toBe(201);
  }
  // Many queues in one namespace, and some nodes, written directly: what is listed, not how it came.
  await t.db.query(
    `INSERT INTO queues (namespace, name) SELECT 'bulk', 'q-' || lpad(i::text, 4, '0') FROM generate_series(1, ${BULK}) i
     UNION ALL SELECT 'a', n FROM unnest(ARRAY['q-x', 'q-y']) n`,
  );
  await t.db.query(
    `INSERT INTO nodes (name, cpu_millis, memory_bytes) SELECT 'n-' || i, 1000, 1073741824 FROM generate_series(1, 7) i`,
  );
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
});

describe('the /api/v1 lists in pages', () => {
  const cases: Array<{ path: string; expected: () => Promise<string[]> }> = [
    { path: '/api/v1/workflows', expected: () => rows('workflows') },
    {
      path: '/api/v1/workflows?namespace=b',
      expected: async () => (await rows('workflows')).filter((k) => k.startsWith('b/')),
    },
    {
      path: '/api/v1/namespaces/c/workflows',
      expected: async () => (await rows('workflows')).filter((k) => k.startsWith('c/')),
    },
    { path: '/api/v1/cronjobs', expected: () => rows('cronjobs') },
    {
      path: '/api/v1/namespaces/a/cronjobs',
      expected: async () => (await rows('cronjobs')).filter((k) => k.startsWith('a/')),
    },
    {
      path: '/api/v1/queues?namespace=a',
      expected: async () => (await rows('queues')).filter((k) => k.startsWith('a/')),
    },
    { path: '/api/v1/resourcequotas', expected: () => rows('resource_quotas') },
    { path: '/api/v1/nodes', expected: () => rows('nodes', false) },
  ];
  for (const { path, expected } of cases)
    it(`${path}: pages of 2 join to every object once`, async () => {
      const read = await pages(path, 2);
      const keys = read.flat();
      const want = await expected();
      expect(want.length).toBeGreaterThan(2);
      for (const page of read) expect(page.length).toBeLessThanOrEqual(2);
      expect(read.length).toBe(Math.ceil(want.length / 2));
      expect(keys.length).toBe(new Set(keys).size);
      expect(sorted(keys)).toEqual(sorted(want));
    });

  it('serves 500 without a limit and at most 1,000, and every page together is the whole list', async () => {
    const all = (await rows('queues')).filter((k) => k.startsWith('bulk/'));
    expect(all.length).toBe(BULK);
    const unlimited = await pages('/api/v1/namespaces/bulk/queues', null);
    expect(unlimited.map((p) => p.length)).toEqual([500, 500, 100]);
    const most = await pages('/api/v1/queues?namespace=bulk', 5000);
    expect(most.map((p) => p.length)).toEqual([1000, 100]);
    expect(sorted(most.flat())).toEqual(sorted(all));
  });

  it('refuses a bad limit or continue with 400', async () => {
    for (const path of [
      '/api/v1/workflows?limit=0',
      '/api/v1/cronjobs?limit=x',
      '/api/v1/nodes?limit=-1',
      '/api/v1/queues?continue=%25%25',
      '/api/v1/resourcequotas?continue=bm90IGEga2V5',
    ])
      expect((await call('GET', path)).status, path).toBe(400);
    // A page of namespace a's list does not continue namespace b's.
    const first = await call('GET', '/api/v1/namespaces/a/workflows?limit=1');
    const token = encodeURIComponent(first.body.metadata.continue);
    expect((await call('GET', `/api/v1/namespaces/b/workflows?continue=${token}`)).status).toBe(400);
  });
});

describe('the Kubernetes lists in pages', () => {
  it('pages queues, workflows, nodes and namespaces in the store: 500 without a limit, continue to the end', async () => {
    const queues = await pages('/apis/fencer.dev/v1/queues', null);
    expect(queues[0]!.length).toBe(500);
    expect(sorted(queues.flat())).toEqual(sorted(await rows('queues')));
    const workflows = await pages('/apis/fencer.dev/v1/namespaces/b/workflows', 1);
    expect(workflows.map((p) => p.length)).toEqual([1, 1, 1]);
    expect(sorted(workflows.flat())).toEqual(['b/w1', 'b/w2', 'b/w3']);
    const nodes = await pages('/apis/fencer.dev/v1/nodes', 3);
    expect(sorted(nodes.flat())).toEqual(sorted(await rows('nodes', false)));
    const namespaces = await pages('/api/v1/namespaces', 2);
    expect(sorted(namespaces.flat())).toEqual(['/a', '/b', '/bulk', '/c', '/default']);
    for (const page of namespaces) expect(page.length).toBeLessThanOrEqual(2);
  });
});

describe('fencer get', () => {
  it('lists every queue, beyond one page', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(projectRoot(), 'dist/cli/main.js'), 'get', 'queues', '-n', 'bulk', '-o', 'json', '--server', replica.url],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    const keys = (JSON.parse(stdout) as { items: unknown[] }).items.map(keyOf);
    expect(keys.length).toBe(BULK);
    expect(new Set(keys).size).toBe(BULK);
  });
});
