// The auth tables (migration 0025): RBAC objects stored and read back as the authorizer reads
// them, a binding's roleRef never changing, revocations kept until their token expired, and a
// NOTIFY fencer_auth on every change so replicas can cache the policy.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from '../helpers/database.js';
import {
  deleteBinding,
  deleteRole,
  isTokenRevoked,
  listClusterRoleBindings,
  listRoleBindings,
  listRoles,
  pruneRevokedTokens,
  readPolicy,
  revokedTokens,
  revokeToken,
  upsertClusterRole,
  upsertClusterRoleBinding,
  upsertRole,
  upsertRoleBinding,
} from '../../src/store/auth.js';
import { authorize } from '../../src/auth/rbac/authorize.js';
import { ValidationError } from '../../src/errors/validation-error.js';
import { eventually } from '../helpers/eventually.js';
import { CHANNELS } from '../../src/store/channels.js';

const RBAC = 'rbac.fencer.dev';
let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase('auth_store');
});
afterAll(() => t?.close());

it('stores roles and bindings and reads them back as the policy the authorizer uses', async () => {
  const rules = [{ verbs: ['create'], apiGroups: ['fencer.dev'], resources: ['jobs/cancel'] }];
  expect(await upsertRole(t.db, { namespace: 'a', name: 'canceller', rules, labels: { team: 'a' } })).toBe('created');
  expect(await upsertRole(t.db, { namespace: 'a', name: 'canceller', rules, labels: { team: 'a' } })).toBe('unchanged');
  expect(
    await upsertClusterRole(t.db, { name: 'reader', rules: [{ verbs: ['get'], apiGroups: ['*'], resources: ['*'] }] }),
  ).toBe('created');
  const binding = {
    namespace: 'a',
    name: 'alice-cancels',
    subjects: [{ kind: 'User' as const, name: 'alice', apiGroup: RBAC }],
    roleRef: { apiGroup: RBAC, kind: 'Role' as const, name: 'canceller' },
  };
  expect(await upsertRoleBinding(t.db, binding)).toBe('created');
  expect(
    await upsertRoleBinding(t.db, {
      ...binding,
      subjects: [...binding.subjects, { kind: 'Group', name: 'ops', apiGroup: RBAC }],
    }),
  ).toBe('updated');
  expect(
    await upsertClusterRoleBinding(t.db, {
      name: 'everyone-reads',
      subjects: [{ kind: 'Group', name: 'readers', apiGroup: RBAC }],
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'reader' },
    }),
  ).toBe('created');

  const [role] = await listRoles(t.db, 'a');
  expect(role).toMatchObject({ namespace: 'a', name: 'canceller', rules, labels: { team: 'a' }, resourceVersion: 1 });
  expect((await listRoleBindings(t.db, 'a', 'alice-cancels'))[0]!.resourceVersion).toBe(2);
  expect((await listClusterRoleBindings(t.db))[0]!.roleRef).toEqual({
    apiGroup: RBAC,
    kind: 'ClusterRole',
    name: 'reader',
  });

  const policy = await readPolicy(t.db);
  expect(policy.roles).toEqual([{ namespace: 'a', name: 'canceller', rules }]);
  expect(policy.roleBindings[0]!.subjects.map((s) => s.name)).toEqual(['alice', 'ops']);
  const alice = { username: 'alice', groups: ['system:authenticated'] };
  const cancel = { verb: 'create', apiGroup: 'fencer.dev', resource: 'jobs', subresource: 'cancel', name: 'x' };
  expect(authorize({ user: alice, ...cancel, namespace: 'a' }, policy).allowed).toBe(true);
  expect(authorize({ user: alice, ...cancel, namespace: 'b' }, policy).allowed).toBe(false);
  expect(
    authorize(
      { user: { username: 'r', groups: ['readers'] }, verb: 'get', apiGroup: 'fencer.dev', resource: 'jobs' },
      policy,
    ).allowed,
  ).toBe(true);
});

it('keeps a binding’s roleRef for its whole life', async () => {
  const binding = {
    namespace: 'a',
    name: 'fixed',
    subjects: [{ kind: 'User' as const, name: 'bob' }],
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole' as const, name: 'view' },
  };
  await upsertRoleBinding(t.db, binding);
  const err = await upsertRoleBinding(t.db, { ...binding, roleRef: { ...binding.roleRef, name: 'admin' } }).catch(
    (e) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  expect(err.message).toMatch(/cannot change roleRef \(it is ClusterRole\/view\)/);
  expect((await listRoleBindings(t.db, 'a', 'fixed'))[0]!.roleRef.name).toBe('view');
  // The database refuses a ClusterRoleBinding to a Role whatever the caller checked.
  await expect(
    t.db.query(
      `INSERT INTO rbac_bindings (kind, namespace, name, role_kind, role_name, subjects) VALUES ('ClusterRoleBinding', '', 'x', 'Role', 'r', '[]')`,
    ),
  ).rejects.toThrow(/rbac_cluster_binding_role/);
  expect(await deleteBinding(t.db, 'a', 'fixed')).toBe(true);
  expect(await deleteBinding(t.db, 'a', 'fixed')).toBe(false);
  expect(await deleteRole(t.db, null, 'reader')).toBe(true);
  expect((await readPolicy(t.db)).clusterRoles).toEqual([]);
});

it('remembers a revoked token until it has expired, and says so to every replica', async () => {
  const listener = new pg.Client({ connectionString: t.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload}`));
  await listener.query(`LISTEN ${CHANNELS.auth}`);
  try {
    const later = new Date(Date.now() + 3600_000);
    expect(await revokeToken(t.db, { jti: 'j-1', expiresAt: later, actor: 'ops', reason: 'leaked' })).toBe(true);
    expect(await revokeToken(t.db, { jti: 'j-1', expiresAt: later, actor: 'ops', reason: 'again' })).toBe(false);
    expect(await isTokenRevoked(t.db, 'j-1')).toBe(true);
    expect(await isTokenRevoked(t.db, 'j-2')).toBe(false);
    await revokeToken(t.db, { jti: 'old', expiresAt: new Date(Date.now() - 120_000), actor: null, reason: null });
    expect((await revokedTokens(t.db)).map((r) => r.jti)).toEqual(['j-1']);
    expect(await pruneRevokedTokens(t.db, 60)).toBe(1);
    expect(await isTokenRevoked(t.db, 'old')).toBe(false);
    await upsertClusterRole(t.db, { name: 'noisy', rules: [] });
    await eventually(() => heard.includes('fencer_auth:revoked_tokens') && heard.includes('fencer_auth:rbac_roles'), {
      what: 'NOTIFY fencer_auth for both tables',
    });
  } finally {
    await listener.end();
  }
});
