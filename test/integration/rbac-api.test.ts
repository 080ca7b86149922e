// The RBAC kinds (rbac.fencer.dev/v1) served as Kubernetes serves rbac.authorization.k8s.io, driven
// by the real kubectl: an admin applies a Role and a RoleBinding, gets and deletes them; the user
// bound then may do what the Role grants in that namespace and nothing else (`kubectl auth can-i`
// yes and no, `--list`, `auth whoami`); nobody grants what they do not hold (escalation, 403);
// and `fencer auth can-i` answers the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import { startReplica } from '../helpers/replica.js';
import { adminFetch, bearerOf, tokenFor } from '../helpers/auth.js';
import { KUBECTL, kubectlAgainst } from '../helpers/kubectl.js';
import { eventually } from '../helpers/eventually.js';
import type { Replica } from '../../src/replica.js';
import { projectRoot } from '../../src/paths.js';

let t: TestDatabase;
let replica: Replica;
let home: string;
let alice: string;

const ROLE = `apiVersion: rbac.fencer.dev/v1
kind: Role
metadata:
  name: job-reader
  namespace: team-a
rules:
  - apiGroups: [fencer.dev]
    resources: [jobs]
    verbs: [get, list, watch]
`;

const BINDING = `apiVersion: rbac.fencer.dev/v1
kind: RoleBinding
metadata:
  name: alice-reads
  namespace: team-a
subjects:
  - kind: User
    name: alice
    apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: Role
  name: job-reader
  apiGroup: rbac.authorization.k8s.io
`;

beforeAll(async () => {
  t = await freshDatabase('rbac_api');
  replica = await startReplica(t.url);
  home = mkdtempSync(join(tmpdir(), 'fencer-rbac-'));
  alice = await tokenFor('alice', ['team-a']);
  writeFileSync(join(home, 'role.yaml'), ROLE);
  writeFileSync(join(home, 'binding.yaml'), BINDING);
});

afterAll(async () => {
  await replica?.stop();
  await t?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

const admin = kubectlAgainst(
  () => replica.url,
  () => home,
);
const asAlice = kubectlAgainst(
  () => replica.url,
  () => join(home, 'alice'),
  () => alice,
);

describe.skipIf(!KUBECTL)(`RBAC through kubectl (${KUBECTL ?? 'not found: skipped'})`, () => {
  it('lists the RBAC kinds in discovery', async () => {
    const { stdout, code, stderr } = await admin('api-resources', '--api-group', 'rbac.fencer.dev');
    expect(code, stderr).toBe(0);
    for (const kind of ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'])
      expect(stdout).toMatch(new RegExp(`rbac\\.fencer\\.dev/v1\\s+(true|false)\\s+${kind}$`, 'm'));
  });

  it('applies, gets and deletes a Role and a RoleBinding; the user bound may read jobs in that namespace only', async () => {
    // Before: alice may do nothing in team-a (kubectl's own wording of the 403).
    const before = await asAlice('get', 'fj', '-n', 'team-a');
    expect(before.code).not.toBe(0);
    expect(before.stderr).toContain(
      'User "alice" cannot list resource "jobs" in API group "fencer.dev" in the namespace "team-a"',
    );
    expect((await admin('apply', '-f', join(home, 'role.yaml'))).stdout).toContain(
      'role.rbac.fencer.dev/job-reader created',
    );
    expect((await admin('apply', '-f', join(home, 'binding.yaml'))).stdout).toContain(
      'rolebinding.rbac.fencer.dev/alice-reads created',
    );
    // Applied again, unchanged (client-side apply patches it).
    const again = await admin('apply', '-f', join(home, 'role.yaml'));
    expect(again.code, again.stderr).toBe(0);
    const got = await admin('get', 'roles.rbac.fencer.dev', 'job-reader', '-n', 'team-a', '-o', 'json');
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ kind: 'Role', rules: [{ resources: ['jobs'] }] });

    // The replica reads its policy again on NOTIFY fencer_auth.
    await eventually(async () => (await asAlice('get', 'fj', '-n', 'team-a')).code === 0, {
      what: 'alice allowed to list jobs in team-a',
    });
    const other = await asAlice('get', 'fj', '-n', 'team-b');
    expect(other.stderr).toContain('cannot list resource "jobs" in API group "fencer.dev" in the namespace "team-b"');
    const everywhere = await asAlice('get', 'fj', '-A');
    expect(everywhere.stderr).toContain('cannot list resource "jobs" in API group "fencer.dev" at the cluster scope');

    expect((await asAlice('auth', 'can-i', 'list', 'jobs', '-n', 'team-a')).stdout.trim()).toBe('yes');
    const no = await asAlice('auth', 'can-i', 'delete', 'jobs', '-n', 'team-a');
    expect(no.stdout.trim()).toBe('no');
    expect(no.code).toBe(1);
    expect((await asAlice('auth', 'can-i', 'list', 'jobs', '-n', 'team-b')).stdout.trim()).toBe('no');
    const list = await asAlice('auth', 'can-i', '--list', '-n', 'team-a');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^jobs\.fencer\.dev\s+\[\]\s+\[\]\s+\[get list watch\]/m);
    const whoami = await asAlice('auth', 'whoami');
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/Username\s+alice/);
    expect(whoami.stdout).toMatch(/Groups\s+\[team-a system:authenticated\]/);

    expect((await admin('delete', '-f', join(home, 'binding.yaml'))).code).toBe(0);
    await eventually(async () => (await asAlice('get', 'fj', '-n', 'team-a')).code !== 0, {
      what: 'alice refused again once unbound',
    });
    expect((await admin('delete', 'roles.rbac.fencer.dev', 'job-reader', '-n', 'team-a')).code).toBe(0);
    expect((await t.db.query('SELECT count(*)::int AS n FROM rbac_roles')).rows[0].n).toBe(0);
  });

  it('creates and deletes cluster-scoped kinds (ClusterRole, ClusterRoleBinding)', async () => {
    const file = join(home, 'cluster.yaml');
    writeFileSync(
      file,
      `apiVersion: rbac.fencer.dev/v1
kind: ClusterRole
metadata:
  name: node-reader
rules:
  - apiGroups: [fencer.dev]
    resources: [nodes]
    verbs: [get, list]
---
apiVersion: rbac.fencer.dev/v1
kind: ClusterRoleBinding
metadata:
  name: alice-nodes
subjects:
  - kind: User
    name: alice
roleRef:
  kind: ClusterRole
  name: node-reader
  apiGroup: rbac.fencer.dev
`,
    );
    const applied = await admin('apply', '-f', file);
    expect(applied.code, applied.stderr).toBe(0);
    await eventually(async () => (await asAlice('auth', 'can-i', 'list', 'nodes')).stdout.trim() === 'yes', {
      what: 'alice may list nodes',
    });
    expect((await admin('delete', '-f', file)).code).toBe(0);
  });
});

describe('escalation', () => {
  it('a namespace admin grants within what admin holds, and is refused more (403, nothing stored)', async () => {
    // bob administers team-a (the built-in admin ClusterRole through a RoleBinding).
    const grant = await adminFetch(`${replica.url}/apis/rbac.fencer.dev/v1/namespaces/team-a/rolebindings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'rbac.fencer.dev/v1',
        kind: 'RoleBinding',
        metadata: { name: 'bob-admin' },
        subjects: [{ kind: 'User', name: 'bob' }],
        roleRef: { kind: 'ClusterRole', name: 'admin', apiGroup: 'rbac.fencer.dev' },
      }),
    });
    expect(grant.status).toBe(201);
    const bob = bearerOf(await tokenFor('bob'));
    const post = (path: string, body: object) =>
      fetch(`${replica.url}${path}`, {
        method: 'POST',
        headers: { ...bob, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const role = (name: string, resources: string[]) => ({
      apiVersion: 'rbac.fencer.dev/v1',
      kind: 'Role',
      metadata: { name },
      rules: [{ apiGroups: ['fencer.dev'], resources, verbs: ['create', 'update', 'delete'] }],
    });
    // What admin holds: writing jobs.
    await eventually(
      async () =>
        (await post('/apis/rbac.fencer.dev/v1/namespaces/team-a/roles', role('jobs-writer', ['jobs']))).status === 201,
      { what: 'bob, now admin of team-a, creating a Role within what he holds' },
    );
    // What admin does not hold: writing quotas (a cluster-admin's).
    const refused = await post(
      '/apis/rbac.fencer.dev/v1/namespaces/team-a/roles',
      role('quota-writer', ['resourcequotas']),
    );
    expect(refused.status).toBe(403);
    expect((await refused.json()).message).toMatch(/is attempting to grant RBAC permissions not currently held/);
    // Nor bind cluster-admin to himself.
    const bind = await post('/apis/rbac.fencer.dev/v1/namespaces/team-a/rolebindings', {
      apiVersion: 'rbac.fencer.dev/v1',
      kind: 'RoleBinding',
      metadata: { name: 'bob-root' },
      subjects: [{ kind: 'User', name: 'bob' }],
      roleRef: { kind: 'ClusterRole', name: 'cluster-admin', apiGroup: 'rbac.fencer.dev' },
    });
    expect(bind.status).toBe(403);
    // Nor anything in another namespace.
    expect((await post('/apis/rbac.fencer.dev/v1/namespaces/team-b/roles', role('jobs-writer', ['jobs']))).status).toBe(
      403,
    );
    const names = (await t.db.query('SELECT name FROM rbac_roles ORDER BY name')).rows.map((r) => r.name);
    expect(names).toEqual(['jobs-writer']);
    const bindings = (await t.db.query('SELECT name FROM rbac_bindings ORDER BY name')).rows.map((r) => r.name);
    expect(bindings).toEqual(['bob-admin']);
  });
});

describe('fencer apply', () => {
  it('applies RBAC documents (created, then configured) as the admin', async () => {
    const fencer = (...args: string[]) =>
      promisify(execFile)(process.execPath, [
        join(projectRoot(), 'dist/cli/main.js'),
        ...args,
        '--server',
        replica.url,
      ]);
    const file = join(home, 'cli-role.yaml');
    writeFileSync(file, ROLE.replace('job-reader', 'cli-reader'));
    expect((await fencer('apply', '-f', file)).stdout).toBe('role.rbac.fencer.dev/cli-reader created\n');
    writeFileSync(file, ROLE.replace('job-reader', 'cli-reader').replace('[get, list, watch]', '[get]'));
    expect((await fencer('apply', '-f', file)).stdout).toBe('role.rbac.fencer.dev/cli-reader configured\n');
    const { rows } = await t.db.query("SELECT rules FROM rbac_roles WHERE name = 'cli-reader'");
    expect(rows[0].rules).toEqual([{ apiGroups: ['fencer.dev'], resources: ['jobs'], verbs: ['get'] }]);
  });
});

describe('fencer get and delete', () => {
  const cli = (token: string | undefined, ...args: string[]) =>
    promisify(execFile)(process.execPath, [join(projectRoot(), 'dist/cli/main.js'), ...args, '--server', replica.url], {
      env: { ...process.env, ...(token ? { FENCER_TOKEN: token } : {}) },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({
        code: e.code ?? 1,
        stdout: e.stdout ?? '',
        stderr: e.stderr ?? '',
      }),
    );
  const fencer = (...args: string[]) => cli(undefined, ...args);
  const roleRows = async (name: string) =>
    (await t.db.query('SELECT kind, namespace FROM rbac_roles WHERE name = $1', [name])).rows;
  const bindingRows = async (name: string) =>
    (await t.db.query('SELECT kind, namespace FROM rbac_bindings WHERE name = $1', [name])).rows;

  it('gets Roles, ClusterRoles and their bindings as kubectl prints them, and deletes them (rows gone; a dry run and a refused caller change nothing)', async () => {
    const file = join(home, 'get-delete.yaml');
    writeFileSync(
      file,
      [
        ROLE.replace('job-reader', 'getter'),
        BINDING.replace('alice-reads', 'getter-binding').replace('name: job-reader', 'name: getter'),
        `apiVersion: rbac.fencer.dev/v1
kind: ClusterRole
metadata:
  name: node-lister
rules:
  - apiGroups: [fencer.dev]
    resources: [nodes]
    verbs: [list]
`,
        `apiVersion: rbac.fencer.dev/v1
kind: ClusterRoleBinding
metadata:
  name: ops-list-nodes
subjects:
  - kind: Group
    name: ops
    apiGroup: rbac.fencer.dev
roleRef:
  kind: ClusterRole
  name: node-lister
  apiGroup: rbac.fencer.dev
`,
      ].join('---\n'),
    );
    expect((await fencer('apply', '-f', file)).code).toBe(0);

    const roles = await fencer('get', 'roles', '-n', 'team-a');
    expect(roles.stdout).toMatch(/^NAME\s+CREATED AT$/m);
    expect(roles.stdout).toMatch(/^getter\s+\d{4}-/m);
    expect((await fencer('get', 'roles', '-A')).stdout).toMatch(/^team-a\s+getter\s/m);
    expect((await fencer('get', 'role', 'getter', '-n', 'team-a', '-o', 'name')).stdout).toBe(
      'role.rbac.fencer.dev/getter\n',
    );
    expect(
      JSON.parse((await fencer('get', 'roles.rbac.fencer.dev', 'getter', '-n', 'team-a', '-o', 'json')).stdout),
    ).toMatchObject({
      kind: 'Role',
      metadata: { name: 'getter', namespace: 'team-a' },
      rules: [{ resources: ['jobs'], verbs: ['get', 'list', 'watch'] }],
    });
    const bindings = await fencer('get', 'rolebindings', '-n', 'team-a', '-o', 'wide');
    expect(bindings.stdout).toMatch(/^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS$/m);
    expect(bindings.stdout).toMatch(/^getter-binding\s+Role\/getter\s+\S+\s+alice\s*$/m);
    expect((await fencer('get', 'clusterroles', '-o', 'name')).stdout).toContain(
      'clusterrole.rbac.fencer.dev/node-lister\n',
    );
    expect((await fencer('get', 'clusterrolebinding', 'ops-list-nodes')).stdout).toMatch(
      /^ops-list-nodes\s+ClusterRole\/node-lister\s/m,
    );
    expect((await fencer('get', 'roles', '-n', 'nowhere')).stderr).toBe('No resources found in nowhere namespace.\n');

    // Someone holding no RBAC rights is refused, and the row stays.
    const carol = await cli(await tokenFor('carol'), 'delete', 'role', 'getter', '-n', 'team-a');
    expect(carol.code).not.toBe(0);
    expect(carol.stderr).toMatch(/forbidden/);
    expect(await roleRows('getter')).toEqual([{ kind: 'Role', namespace: 'team-a' }]);
    // A server dry run changes nothing either.
    expect((await fencer('delete', 'role', 'getter', '-n', 'team-a', '--dry-run=server')).stdout).toBe(
      'role.rbac.fencer.dev "getter" deleted (server dry run)\n',
    );
    expect(await roleRows('getter')).toHaveLength(1);

    expect((await fencer('delete', 'role', 'getter', '-n', 'team-a')).stdout).toBe(
      'role.rbac.fencer.dev "getter" deleted\n',
    );
    expect(await roleRows('getter')).toEqual([]);
    expect((await fencer('delete', 'rolebinding', 'getter-binding', '-n', 'team-a')).code).toBe(0);
    expect(await bindingRows('getter-binding')).toEqual([]);
    expect((await fencer('delete', 'clusterrolebinding', 'ops-list-nodes')).stdout).toBe(
      'clusterrolebinding.rbac.fencer.dev "ops-list-nodes" deleted\n',
    );
    expect(await bindingRows('ops-list-nodes')).toEqual([]);
    expect((await fencer('delete', 'clusterrole', 'node-lister')).code).toBe(0);
    expect(await roleRows('node-lister')).toEqual([]);
    const gone = await fencer('get', 'role', 'getter', '-n', 'team-a');
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/not found/);
  });
});

describe('fencer auth can-i', () => {
  it('says yes or no (exit 0 or 1) as the token allows', async () => {
    const fencer = (token: string, ...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        [join(projectRoot(), 'dist/cli/main.js'), ...args, '--server', replica.url],
        {
          env: { ...process.env, FENCER_TOKEN: token },
        },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code?: number; stdout?: string }) => ({ code: e.code ?? 1, stdout: e.stdout ?? '' }),
      );
    const admin = process.env.FENCER_TOKEN!;
    expect(await fencer(admin, 'auth', 'can-i', 'delete', 'jobs', '-n', 'team-b')).toEqual({
      code: 0,
      stdout: 'yes\n',
    });
    const carol = await tokenFor('carol');
    expect(await fencer(carol, 'auth', 'can-i', 'delete', 'jobs', '-n', 'team-b')).toEqual({ code: 1, stdout: 'no\n' });
    expect(await fencer(carol, 'auth', 'can-i', 'create', 'selfsubjectaccessreviews.authorization.k8s.io')).toEqual({
      code: 0,
      stdout: 'yes\n',
    });
  });
});
