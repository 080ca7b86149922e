// GET /api/v1/jobs a page at a time (limit, continue) on a real replica, with 1,154 jobs in three
// namespaces: the pages of a list join to exactly its jobs, none twice, none missing, with its
// filters and across namespaces, also while jobs are created and deleted between pages (keyset
// pagination: a job deleted at the cursor or created behind it shifts nothing); no limit is a page
// of 500, a limit above 1,000 is served 1,000; a bad limit or continue is 400 and changes nothing.
// The Kubernetes Jobs list pages in the store when its selectors allow, in memory otherwise, and
// kubectl and the fencer CLI list every job. The page query walks the (namespace, name) index.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { KUBECTL, kubectlAgainst } from '../helpers/kubectl.js';
import { projectRoot } from '../../src/paths.js';
import { sql } from '../../src/store/sql.js';
import type { Replica } from '../../src/replica.js';
import { adminFetch } from '../helpers/auth.js';

let t: TestDatabase;
let replica: Replica;
let home: string;

const BULK = 1_100; // more than the largest page
const numbered = (prefix: string, count: number, width: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(width, '0')}`);
const bulk = numbered('b', BULK, 4);
const small = numbered('s', 30, 2);
const churn = numbered('k', 20, 2);
const doomed = numbered('y', 4, 2); // churn's, deleted before the pages reach them
const cancelled = ['s-00', 's-10', 's-20'];

const job = (namespace: string, name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'fencer.dev/v1',
  kind: 'Job',
  metadata: { name, namespace, labels },
  spec: { resources: { cpu: '100m', memory: '64Mi' }, duration: '1h' },
});

async function call(method: string, path: string, body?: unknown) {
  const res = await adminFetch(replica.url + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
  });
  return { status: res.status, body: (await res.json()) as any };
}

interface Page {
  keys: string[];
  continue?: string;
  remainingItemCount?: number;
}

/** One page: its jobs' namespace/name and its continue token. */
async function page(path: string): Promise<Page> {
  const { status, body } = await call('GET', path);
  expect(status, JSON.stringify(body)).toBe(200);
  return {
    keys: body.items.map((j: any) => `${j.metadata.namespace}/${j.metadata.name}`),
    continue: body.metadata.continue,
    remainingItemCount: body.metadata.remainingItemCount,
  };
}

/** Every page of a list, `between` run before each page after the first. */
async function pages(
  path: string,
  limit: number | null,
  between: (seen: string[]) => Promise<void> = async () => {},
): Promise<Page[]> {
  const base = `${path}${path.includes('?') ? '&' : '?'}${limit === null ? '' : `limit=${limit}`}`;
  const read: Page[] = [await page(base)];
  while (read.at(-1)!.continue) {
    await between(read.flatMap((p) => p.keys));
    read.push(await page(`${base}&continue=${encodeURIComponent(read.at(-1)!.continue!)}`));
  }
  return read;
}

const keysIn = (namespace: string, names: string[]) => names.map((n) => `${namespace}/${n}`);
const sorted = (keys: string[]) => [...keys].sort();

async function everyJob(): Promise<string[]> {
  return (await t.db.query<{ key: string }>("SELECT namespace || '/' || name AS key FROM jobs")).rows.map((r) => r.key);
}

beforeAll(async () => {
  t = await freshDatabase('job_pages');
  // No node registers: the jobs stay Pending (but those cancelled below).
  replica = await startReplica(t.url, 'replica-p');
  home = mkdtempSync(join(tmpdir(), 'fencer-job-pages-'));
  const team = (i: number) => ({ team: i % 2 === 0 ? 'red' : 'blue' });
  const parity = (i: number) => ({ parity: i % 2 === 0 ? 'even' : 'odd' });
  for (const batch of [bulk.slice(0, BULK / 2), bulk.slice(BULK / 2)]) {
    expect(
      (
        await call(
          'POST',
          '/api/v1/jobs',
          batch.map((name) => job('bulk', name, team(Number(name.slice(2))))),
        )
      ).status,
    ).toBe(201);
  }
  expect(
    (
      await call(
        'POST',
        '/api/v1/jobs',
        small.map((name, i) => job('small', name, parity(i))),
      )
    ).status,
  ).toBe(201);
  expect(
    (
      await call(
        'POST',
        '/api/v1/jobs',
        [...churn, ...doomed].map((name) => job('churn', name)),
      )
    ).status,
  ).toBe(201);
  for (const name of cancelled)
    expect((await call('POST', `/api/v1/namespaces/small/jobs/${name}/cancel`)).status).toBe(200);
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('GET /api/v1/jobs in pages', () => {
  const cases: Array<{ what: string; path: string; limit: number; expected: () => string[] }> = [
    {
      what: 'a namespace, one job a page',
      path: '/api/v1/jobs?namespace=small',
      limit: 1,
      expected: () => keysIn('small', small),
    },
    {
      what: 'the namespaced route',
      path: '/api/v1/namespaces/small/jobs',
      limit: 7,
      expected: () => keysIn('small', small),
    },
    {
      what: 'a label selector',
      path: '/api/v1/jobs?namespace=small&labelSelector=parity%3Deven',
      limit: 4,
      expected: () =>
        keysIn(
          'small',
          small.filter((_, i) => i % 2 === 0),
        ),
    },
    {
      what: 'a phase',
      path: '/api/v1/namespaces/small/jobs?fieldSelector=status.phase%3DPending',
      limit: 5,
      expected: () =>
        keysIn(
          'small',
          small.filter((n) => !cancelled.includes(n)),
        ),
    },
    {
      what: 'a label selector across namespaces',
      path: '/api/v1/jobs?labelSelector=team%3Dred',
      limit: 256,
      expected: () =>
        keysIn(
          'bulk',
          bulk.filter((_, i) => i % 2 === 0),
        ),
    },
    {
      what: 'every namespace, the largest page',
      path: '/api/v1/jobs',
      limit: 1000,
      expected: () => [...keysIn('bulk', bulk), ...keysIn('churn', [...churn, ...doomed]), ...keysIn('small', small)],
    },
  ];

  it.each(cases)(
    '$what: pages of $limit join to exactly its jobs, none twice, none missing',
    async ({ path, limit, expected }) => {
      const read = await pages(path, limit);
      const keys = read.flatMap((p) => p.keys);
      expect(keys.length).toBe(new Set(keys).size);
      expect(sorted(keys)).toEqual(sorted(expected()));
      // Full pages until the last, which alone has no continue token.
      for (const p of read.slice(0, -1)) expect(p.keys.length).toBe(limit);
      expect(read.at(-1)!.keys.length).toBeLessThanOrEqual(limit);
      expect(read.length).toBe(Math.max(1, Math.ceil(expected().length / limit)));
    },
  );

  it('without a limit a page holds 500; a limit above 1,000 is served 1,000; the last page has no continue', async () => {
    const all = sorted(await everyJob());
    expect(all.length).toBe(1_154);
    const byDefault = await pages('/api/v1/jobs', null);
    expect(byDefault.map((p) => p.keys.length)).toEqual([500, 500, 154]);
    expect(sorted(byDefault.flatMap((p) => p.keys))).toEqual(all);
    const capped = await pages('/api/v1/jobs', 5_000);
    expect(capped.map((p) => p.keys.length)).toEqual([1000, 154]);
    const last = await call('GET', `/api/v1/jobs?limit=5000&continue=${capped[0]!.continue}`);
    expect(last.body.metadata).toEqual({});
    expect(last.body).toMatchObject({ apiVersion: 'fencer.dev/v1', kind: 'JobList' });
  });

  it('jobs created and deleted between pages: each job there throughout comes once; one created behind the cursor or deleted ahead of it never', async () => {
    const created: string[] = [];
    let turn = 0;
    const read = await pages('/api/v1/namespaces/churn/jobs', 3, async (seen) => {
      turn++;
      // The job the token names (the last one read), gone before the next page is asked for.
      const last = seen.at(-1)!.split('/')[1]!;
      expect((await call('DELETE', `/api/v1/namespaces/churn/jobs/${last}`)).status).toBe(200);
      // One behind the cursor (a-*: before every k-*), one ahead of it (z-*: after every y-* and z-* before it).
      for (const name of [`a-${String(turn).padStart(3, '0')}`, `z-${String(turn).padStart(3, '0')}`]) {
        expect((await call('POST', '/api/v1/jobs', job('churn', name))).status).toBe(201);
        created.push(name);
      }
      // One not read yet, deleted before the pages reach it.
      if (turn <= doomed.length)
        expect((await call('DELETE', `/api/v1/namespaces/churn/jobs/${doomed[turn - 1]}`)).status).toBe(200);
    });
    const keys = read.flatMap((p) => p.keys);
    expect(keys.length).toBe(new Set(keys).size);
    const aheadOfCursor = created.filter((n) => n.startsWith('z-'));
    expect(sorted(keys)).toEqual(sorted(keysIn('churn', [...churn, ...aheadOfCursor])));
    expect(turn).toBeGreaterThan(doomed.length); // every doomed job was deleted while the pages went on
  });
});

describe('a bad limit or continue', () => {
  const other = Buffer.from('small/s-03').toString('base64url');
  const cases: Array<{ path: string; says: RegExp }> = [
    { path: '/api/v1/jobs?limit=0', says: /^limit: "0" is not a positive whole number/ },
    { path: '/api/v1/jobs?limit=-5', says: /^limit: "-5" is not a positive whole number/ },
    { path: '/api/v1/jobs?limit=ten', says: /^limit: "ten" is not a positive whole number/ },
    { path: '/api/v1/jobs?limit=2.5', says: /^limit: "2.5" is not a positive whole number/ },
    { path: '/api/v1/jobs?limit=', says: /^limit: "" is not a positive whole number/ },
    { path: '/api/v1/jobs?limit=1&limit=2', says: /^limit: "1,2" is not a positive whole number/ },
    {
      path: '/api/v1/jobs?continue=%25%25garbage',
      says: /^continue: "%%garbage" is not a continue token of this list \(not base64url\)/,
    },
    {
      path: '/api/v1/jobs?continue=nope',
      says: /^continue: "nope" is not a continue token of this list \(not base64url of UTF-8 text\)/,
    },
    {
      path: `/api/v1/jobs?continue=${Buffer.from('no-slash').toString('base64url')}`,
      says: /\(it names no namespace\/name\)/,
    },
    {
      path: `/api/v1/jobs?continue=${Buffer.from('Not_A_Namespace/x').toString('base64url')}`,
      says: /\("Not_A_Namespace" is not a namespace\)/,
    },
    { path: `/api/v1/jobs?continue=${'A'.repeat(600)}`, says: /\(longer than any this server gives\)/ },
    {
      path: `/api/v1/namespaces/churn/jobs?continue=${other}`,
      says: /\(it continues a list of namespace "small", not of "churn"\)/,
    },
    {
      path: `/api/v1/jobs?namespace=bulk&continue=${other}`,
      says: /\(it continues a list of namespace "small", not of "bulk"\)/,
    },
  ];

  it.each(cases)('$path is 400 saying why, and changes nothing', async ({ path, says }) => {
    // The jobs and their history (placement, finding no node, changes neither).
    const state = async () =>
      (
        await t.db.query(
          'SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM history)::int AS history',
        )
      ).rows[0];
    const before = await state();
    const { status, body } = await call('GET', path);
    expect(status).toBe(400);
    expect(body.error.message).toMatch(says);
    expect(await state()).toEqual(before);
  });

  it('on the Kubernetes list is a 400 Status', async () => {
    for (const query of ['limit=-1', 'limit=many', 'continue=nope', `continue=${other}`]) {
      const { status, body } = await call('GET', `/apis/fencer.dev/v1/namespaces/churn/jobs?${query}`);
      expect(status, query).toBe(400);
      expect(body, query).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'BadRequest',
        code: 400,
        message: expect.stringMatching(/^(limit|continue): /),
      });
    }
  });
});

describe('the Kubernetes Jobs list', () => {
  it('pages in the store with a limit and selectors it filters on, in chunks filtered as read with others (no remainingItemCount); both join to exactly their jobs', async () => {
    const all = await everyJob();
    const inStore = await pages('/apis/fencer.dev/v1/jobs?labelSelector=team%3Dred', 300);
    expect(inStore.every((p) => p.remainingItemCount === undefined)).toBe(true);
    expect(sorted(inStore.flatMap((p) => p.keys))).toEqual(
      sorted(
        keysIn(
          'bulk',
          bulk.filter((_, i) => i % 2 === 0),
        ),
      ),
    );
    const namespaced = await pages('/apis/fencer.dev/v1/namespaces/small/jobs', 4);
    expect(sorted(namespaced.flatMap((p) => p.keys))).toEqual(sorted(keysIn('small', small)));
    // != is no filter of the store: it is read in chunks and filtered as they come, a page at a time.
    const scanned = await pages('/apis/fencer.dev/v1/jobs?labelSelector=team!%3Dblue', 300);
    expect(scanned.every((p) => p.remainingItemCount === undefined)).toBe(true);
    expect(scanned.slice(0, -1).every((p) => p.keys.length === 300)).toBe(true);
    const keys = scanned.flatMap((p) => p.keys);
    expect(keys.length).toBe(new Set(keys).size);
    expect(sorted(keys)).toEqual(
      sorted(
        all.filter(
          (k) =>
            !keysIn(
              'bulk',
              bulk.filter((_, i) => i % 2 === 1),
            ).includes(k),
        ),
      ),
    );
  });

  it.skipIf(!KUBECTL)('kubectl get fj -A in chunks of 100 lists every job once', async () => {
    const kubectl = kubectlAgainst(
      () => replica.url,
      () => home,
    );
    const { stdout, stderr, code } = await kubectl(
      'get',
      'fj',
      '-A',
      '--chunk-size=100',
      '--no-headers',
      '-o',
      'custom-columns=KEY:.metadata.namespace,NAME:.metadata.name',
    );
    expect(code, stderr).toBe(0);
    const keys = stdout
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/).join('/'));
    expect(keys.length).toBe(new Set(keys).size);
    expect(sorted(keys)).toEqual(sorted(await everyJob()));
  });
});

describe('fencer get jobs', () => {
  const fencer = async (...args: string[]) =>
    (
      await promisify(execFile)(
        process.execPath,
        [join(projectRoot(), 'dist/cli/main.js'), ...args, '--server', replica.url],
        { maxBuffer: 16 * 1024 * 1024 },
      )
    ).stdout;

  it('lists every job, beyond one page, with and without a selector', async () => {
    const all = await everyJob();
    expect(all.length).toBeGreaterThan(1000);
    const listed = JSON.parse(await fencer('get', 'jobs', '-A', '-o', 'json')) as {
      items: Array<{ metadata: { namespace: string; name: string } }>;
    };
    const keys = listed.items.map((j) => `${j.metadata.namespace}/${j.metadata.name}`);
    expect(keys.length).toBe(new Set(keys).size);
    expect(sorted(keys)).toEqual(sorted(all));
    const table = (await fencer('get', 'jobs', '-n', 'bulk', '-l', 'team=blue')).trim().split('\n');
    expect(table[0]).toMatch(/^NAME\s/);
    expect(sorted(table.slice(1).map((row) => row.split(/\s+/)[0]!))).toEqual(
      sorted(bulk.filter((_, i) => i % 2 === 1)),
    );
  });
});

describe('the page query', () => {
  it('walks the (namespace, name) index from the key and stops at its limit: no sort, no scan of the table', async () => {
    await t.db.query('ANALYZE jobs');
    const nodes = (plan: any): any[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];
    for (const [namespace, after] of [
      [null, ['bulk', 'b-0500']],
      ['bulk', ['bulk', 'b-0500']],
      [null, null],
    ] as const) {
      const parameters = [namespace, null, null, after?.[0] ?? null, after?.[1] ?? null, 11];
      const plan = (await t.db.query(`EXPLAIN (FORMAT JSON) ${sql('jobs/list')}`, parameters)).rows[0]['QUERY PLAN'][0]
        .Plan;
      const types = nodes(plan).map((n) => n['Node Type']);
      expect(types, JSON.stringify(plan)).toEqual(['Limit', 'Index Scan']);
      expect(nodes(plan)[1]['Index Name']).toBe('jobs_namespace_name_key');
    }
  });
});
