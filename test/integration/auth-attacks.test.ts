// Issue 27's attacks on the user routes, replayed against a real replica: a user who may only
// view namespace a (the built-in `view` ClusterRole through a RoleBinding in a) cannot cancel,
// delete or replay anything in a, cannot touch b, cannot list or watch across namespaces (403,
// never a filtered answer), cannot zero b's quota; each refusal is checked in the database, not
// only by its status. A node's token acts for its own node only. Real kubectl with the limited
// token reads Kubernetes' wording. And the guard "authorize before the handler" is broken on
// purpose (FENCER_BREAK_GUARDS=authorize-before-handler): the same cancel then goes through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { adminFetch, bearerOf, tokenFor } from '../helpers/auth.js';
import { eventually } from '../helpers/eventually.js';
import { jobYaml } from '../helpers/jobs.js';
import { KUBECTL, kubectlAgainst } from '../helpers/kubectl.js';
import type { Replica } from '../../src/replica.js';
import { upsertRole, upsertRoleBinding } from '../../src/store/auth.js';
import { NODE_ROUTES } from '../../src/agent-protocol/routes.js';

const HOUR = 3_600_000;

let t: TestDatabase;
let replica: Replica;
let vera: Record<string, string>;
let veraToken: string;
let home: string;

const QUOTA_B = `apiVersion: fencer.dev/v1
kind: ResourceQuota
metadata:
  name: quota
  namespace: b
spec:
  hard:
    cpu: "8"
    memory: 16Gi
`;

async function jobRow(namespace: string, name: string) {
  const { rows } = await t.db.query(
    'SELECT phase, attempt, reason, resource_version, updated_at FROM jobs WHERE namespace = $1 AND name = $2',
    [namespace, name],
  );
  return rows[0] ?? null;
}

async function quotaRow(namespace: string) {
  const { rows } = await t.db.query('SELECT * FROM resource_quotas WHERE namespace = $1', [namespace]);
  return rows[0] ?? null;
}

async function as(headers: Record<string, string>, method: string, path: string, body?: string) {
  const res = await fetch(replica.url + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/yaml' }) },
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

beforeAll(async () => {
  t = await freshDatabase('auth_attacks');
  // No node: the jobs stay Pending, so a cancel or a delete that got through would show.
  replica = await startReplica(t.url, 'replica-x', { deadAfterSilentMs: HOUR, confirmTimeoutMs: HOUR });
  home = mkdtempSync(join(tmpdir(), 'fencer-attacks-'));
  for (const [ns, name] of [
    ['a', 'mine'],
    ['b', 'theirs'],
  ])
    expect(
      (
        await adminFetch(`${replica.url}/api/v1/jobs`, {
          method: 'POST',
          body: jobYaml(name!, { namespace: ns }),
          headers: { 'content-type': 'application/yaml' },
        })
      ).status,
    ).toBe(201);
  expect(
    (
      await adminFetch(`${replica.url}/api/v1/resourcequotas`, {
        method: 'POST',
        body: QUOTA_B,
        headers: { 'content-type': 'application/yaml' },
      })
    ).status,
  ).toBe(201);
  await upsertRoleBinding(t.db, {
    name: 'vera-views',
    namespace: 'a',
    subjects: [{ kind: 'User', name: 'vera' }],
    roleRef: { apiGroup: 'rbac.fencer.dev', kind: 'ClusterRole', name: 'view' },
  });
  // Placement marks each job Unschedulable once (no node): a write of its own that must not land
  // between a test's before and after reads of the row.
  for (const [ns, name] of [
    ['a', 'mine'],
    ['b', 'theirs'],
  ])
    await eventually(async () => (await jobRow(ns!, name!))?.reason === 'Unschedulable', {
      what: `${ns}/${name} marked Unschedulable`,
    });
  veraToken = await tokenFor('vera');
  vera = bearerOf(veraToken);
  // The replica reads the binding on NOTIFY fencer_auth.
  await eventually(async () => (await as(vera, 'GET', '/api/v1/namespaces/a/jobs/mine')).status === 200, {
    what: 'vera allowed to read her namespace',
  });
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a view token in namespace a', () => {
  it('reads a', async () => {
    expect((await as(vera, 'GET', '/api/v1/namespaces/a/jobs')).status).toBe(200);
    expect((await as(vera, 'GET', '/apis/fencer.dev/v1/namespaces/a/jobs')).status).toBe(200);
  });

  it.each([
    ['cancel in a', 'POST', '/api/v1/namespaces/a/jobs/mine/cancel', 'create', 'jobs/cancel', 'a'],
    ['replay in a', 'POST', '/api/v1/namespaces/a/jobs/mine/replay', 'create', 'jobs/replay', 'a'],
    ['delete in a', 'DELETE', '/api/v1/namespaces/a/jobs/mine', 'delete', 'jobs', 'a'],
    ['delete in a (kubectl path)', 'DELETE', '/apis/fencer.dev/v1/namespaces/a/jobs/mine', 'delete', 'jobs', 'a'],
    ['read in b', 'GET', '/api/v1/namespaces/b/jobs/theirs', 'get', 'jobs', 'b'],
    ['cancel in b', 'POST', '/api/v1/namespaces/b/jobs/theirs/cancel', 'create', 'jobs/cancel', 'b'],
    ['delete in b', 'DELETE', '/api/v1/namespaces/b/jobs/theirs', 'delete', 'jobs', 'b'],
  ])(
    'cannot %s: 403 worded as Kubernetes words it, the job unchanged',
    async (_what, method, path, verb, resource, ns) => {
      const name = ns === 'a' ? 'mine' : 'theirs';
      const before = await jobRow(ns, name);
      const answer = await as(vera, method, path);
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({
        kind: 'Status',
        reason: 'Forbidden',
        code: 403,
        message: `jobs.fencer.dev "${name}" is forbidden: User "vera" cannot ${verb} resource "${resource}" in API group "fencer.dev" in the namespace "${ns}"`,
      });
      expect(await jobRow(ns, name)).toEqual(before);
      expect(before).toMatchObject({ phase: 'Pending' });
    },
  );

  it.each([
    ['/api/v1/jobs', 'list'],
    ['/api/v1/workflows', 'list'],
    ['/apis/fencer.dev/v1/jobs', 'list'],
    ['/apis/fencer.dev/v1/jobs?watch=true', 'watch'],
    ['/api/v1/events', 'list'],
    ['/api/v1/changes', 'watch'],
    // The cluster's status lists every node and replica.
    ['/api/v1/status', 'list'],
  ])('cannot read %s across namespaces: 403 at the cluster scope, never a filtered answer', async (path, verb) => {
    const answer = await as(vera, 'GET', path);
    expect(answer.status).toBe(403);
    expect(String(answer.body?.message)).toMatch(
      new RegExp(`User "vera" cannot ${verb} resource ".+" .* at the cluster scope`),
    );
  });

  it('cannot replay across namespaces', async () => {
    expect((await as(vera, 'POST', '/api/v1/jobs/replay')).status).toBe(403);
  });

  it("cannot zero b's quota, nor set a's (a cluster-admin's), and nothing is stored", async () => {
    const before = await quotaRow('b');
    const zero = QUOTA_B.replace('cpu: "8"', 'cpu: "0"').replace('memory: 16Gi', 'memory: "0"');
    const answer = await as(vera, 'POST', '/api/v1/resourcequotas', zero);
    expect(answer.status).toBe(403);
    expect(answer.body?.message).toContain(
      'User "vera" cannot create resource "resourcequotas" in API group "fencer.dev" in the namespace "b"',
    );
    expect(await quotaRow('b')).toEqual(before);
    expect(
      (await as(vera, 'POST', '/api/v1/resourcequotas', zero.replace('namespace: b', 'namespace: a'))).status,
    ).toBe(403);
    expect(await quotaRow('a')).toBeNull();
  });

  it('cannot submit into b, nor in a (view only), and nothing is stored', async () => {
    const count = async () => (await t.db.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n as number;
    const before = await count();
    expect((await as(vera, 'POST', '/api/v1/jobs', jobYaml('sneaky', { namespace: 'b' }))).status).toBe(403);
    expect((await as(vera, 'POST', '/api/v1/jobs', jobYaml('sneaky', { namespace: 'a' }))).status).toBe(403);
    expect(await count()).toBe(before);
  });

  it.skipIf(!KUBECTL)('gets kubectl’s own wording of the refusal', async () => {
    const kubectl = kubectlAgainst(
      () => replica.url,
      () => home,
      () => veraToken,
    );
    const deleted = await kubectl('delete', 'fj', 'mine', '-n', 'a');
    expect(deleted.code).not.toBe(0);
    expect(deleted.stderr).toContain(
      'Error from server (Forbidden): jobs.fencer.dev "mine" is forbidden: User "vera" cannot delete resource "jobs" in API group "fencer.dev" in the namespace "a"',
    );
    expect((await kubectl('get', 'fj', '-n', 'a')).code).toBe(0);
    expect(await jobRow('a', 'mine')).toMatchObject({ phase: 'Pending' });
  });
});

const applyBody = (name: string) =>
  `apiVersion: fencer.dev/v1\nkind: Job\nmetadata: {name: ${name}, namespace: a}\nspec:\n  resources: {cpu: 100m, memory: 1Mi}\n  duration: 1s\n`;

describe('a token that may patch jobs in a, but not create them', () => {
  it('cannot create one by a server-side apply: 403, and no job is stored', async () => {
    await upsertRole(t.db, {
      name: 'patcher',
      namespace: 'a',
      rules: [{ verbs: ['get', 'patch'], apiGroups: ['fencer.dev'], resources: ['jobs'] }],
    });
    await upsertRoleBinding(t.db, {
      name: 'pat-patches',
      namespace: 'a',
      subjects: [{ kind: 'User', name: 'pat' }],
      roleRef: { apiGroup: 'rbac.fencer.dev', kind: 'Role', name: 'patcher' },
    });
    const pat = bearerOf(await tokenFor('pat'));
    await eventually(async () => (await as(pat, 'GET', '/apis/fencer.dev/v1/namespaces/a/jobs/mine')).status === 200, {
      what: 'pat allowed to read jobs in a',
    });
    const apply = (name: string) =>
      fetch(`${replica.url}/apis/fencer.dev/v1/namespaces/a/jobs/${name}?fieldManager=kubectl`, {
        method: 'PATCH',
        headers: { ...pat, 'content-type': 'application/apply-patch+yaml' },
        body: applyBody(name),
      });
    const created = await apply('applied');
    expect(created.status).toBe(403);
    expect(((await created.json()) as { message: string }).message).toContain(
      'User "pat" cannot create resource "jobs" in API group "fencer.dev" in the namespace "a"',
    );
    expect(await jobRow('a', 'applied')).toBeNull();
    // The same apply by the admin creates it: the refusal was the missing create, not the body.
    const byAdmin = await adminFetch(
      `${replica.url}/apis/fencer.dev/v1/namespaces/a/jobs/applied?fieldManager=kubectl`,
      {
        method: 'PATCH',
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: applyBody('applied'),
      },
    );
    expect(byAdmin.status).toBe(201);
  });
});

describe("a node's token", () => {
  it('acts for its own node only, and a token that is no node credential registers nothing', async () => {
    // Signed with the operator's key but bound to no process (no incarnation, no generation).
    const node1 = bearerOf(await tokenFor('system:node:node-1', ['system:nodes']));
    const register = (name: string) =>
      as(node1, 'POST', NODE_ROUTES.register.path(), JSON.stringify({ name, capacity: { cpu: '1', memory: '1Gi' } }));
    expect((await register('node-1')).status).toBe(403);
    const forged = await register('node-2');
    expect(forged.status).toBe(403);
    expect(forged.body?.message).toContain('node "node-1" may act only for itself, not for node "node-2"');
    expect((await t.db.query("SELECT count(*)::int AS n FROM nodes WHERE name LIKE 'node-%'")).rows[0].n).toBe(0);
    expect((await as(node1, 'POST', NODE_ROUTES.heartbeat.path('node-2'))).status).toBe(403);
    expect((await as(node1, 'POST', NODE_ROUTES.reports.path('node-2'), JSON.stringify({ reports: [] }))).status).toBe(
      403,
    );
    // Nor anything a user does.
    expect((await as(node1, 'GET', '/api/v1/namespaces/a/jobs')).status).toBe(403);
  });

  it("a user's token cannot open a node's watch", async () => {
    expect((await as(vera, 'GET', NODE_ROUTES.watch.path('node-1'))).status).toBe(403);
  });
});

describe('the broken variant: a route that skips its authorization', () => {
  it('lets the view token cancel a job in b (the test above would fail)', async () => {
    process.env.FENCER_BREAK_GUARDS = 'authorize-before-handler';
    try {
      const answer = await as(vera, 'POST', '/api/v1/namespaces/b/jobs/theirs/cancel');
      expect(answer.status).toBe(200);
      expect(await jobRow('b', 'theirs')).toMatchObject({ phase: 'Cancelled' });
    } finally {
      delete process.env.FENCER_BREAK_GUARDS;
    }
  });
});
