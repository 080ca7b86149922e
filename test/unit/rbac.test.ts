// The RBAC authorizer matches as Kubernetes' does: a table of requests against one policy, each
// with the answer kube-apiserver would give, then the 403 wording, the reviews kubectl reads,
// the node restriction and the escalation check.
import { describe, expect, it } from 'vitest';
import { authorize, nodeRestriction } from '../../src/auth/rbac/authorize.js';
import { forbidden, forbiddenMessage } from '../../src/auth/rbac/forbidden.js';
import { accessReview, rulesReview, selfSubjectReview } from '../../src/auth/rbac/reviews.js';
import { uncoveredRules } from '../../src/auth/rbac/escalation.js';
import { BUILTIN_CLUSTER_ROLES, FENCER_RESOURCES, isReservedName } from '../../src/auth/rbac/builtin.js';
import { statusOf } from '../../src/api/kube/status.js';
import type { Policy, PolicyRule, ResourceAttributes, UserInfo } from '../../src/domain/rbac.js';

const G = 'fencer.dev';
const RBAC = 'rbac.fencer.dev';
const user = (username: string, ...groups: string[]): UserInfo => ({
  username,
  groups: [...groups, 'system:authenticated'],
});
const alice = user('alice');
const bob = user('bob', 'team-b');
const carol = user('carol');
const dave = user('dave');
const erin = user('erin');
const ops = user('ops', 'system:masters');
const robot = user('system:serviceaccount:a:robot');
const frank = user('frank');
const node1 = user('system:node:node-1', 'system:nodes');

const crRef = (name: string) => ({ apiGroup: RBAC, kind: 'ClusterRole' as const, name });
const roleRef = (name: string) => ({ apiGroup: RBAC, kind: 'Role' as const, name });

const policy: Policy = {
  roles: [
    { namespace: 'a', name: 'canceller', rules: [{ verbs: ['create'], apiGroups: [G], resources: ['jobs/cancel'] }] },
    {
      namespace: 'a',
      name: 'one-job',
      rules: [
        { verbs: ['get', 'delete', 'create', 'list'], apiGroups: [G], resources: ['jobs'], resourceNames: ['nightly'] },
      ],
    },
    { namespace: 'c', name: 'job-writer', rules: [{ verbs: ['*'], apiGroups: [G], resources: ['jobs'] }] },
    { namespace: 'a', name: 'status-reader', rules: [{ verbs: ['get'], apiGroups: ['*'], resources: ['*/status'] }] },
  ],
  clusterRoles: [
    { name: 'everything-in-fencer', rules: [{ verbs: ['*'], apiGroups: [G], resources: ['*'] }] },
    { name: 'metrics', rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/debug/*'] }] },
  ],
  roleBindings: [
    {
      namespace: 'a',
      name: 'alice-edit',
      subjects: [{ kind: 'User', name: 'alice', apiGroup: RBAC }],
      roleRef: crRef('edit'),
    },
    {
      namespace: 'b',
      name: 'team-b-view',
      subjects: [{ kind: 'Group', name: 'team-b', apiGroup: RBAC }],
      roleRef: crRef('view'),
    },
    { namespace: 'b', name: 'bob-cancel', subjects: [{ kind: 'User', name: 'bob' }], roleRef: roleRef('canceller') },
    { namespace: 'a', name: 'carol-one', subjects: [{ kind: 'User', name: 'carol' }], roleRef: roleRef('one-job') },
    {
      namespace: 'a',
      name: 'carol-status',
      subjects: [{ kind: 'User', name: 'carol' }],
      roleRef: roleRef('status-reader'),
    },
    {
      namespace: 'a',
      name: 'robot-admin',
      subjects: [{ kind: 'ServiceAccount', name: 'robot' }],
      roleRef: crRef('admin'),
    },
    { namespace: 'c', name: 'frank-jobs', subjects: [{ kind: 'User', name: 'frank' }], roleRef: roleRef('job-writer') },
    { namespace: 'a', name: 'dangling', subjects: [{ kind: 'User', name: 'erin' }], roleRef: roleRef('missing') },
  ],
  clusterRoleBindings: [
    { name: 'dave-fencer', subjects: [{ kind: 'User', name: 'dave' }], roleRef: crRef('everything-in-fencer') },
    { name: 'dave-metrics', subjects: [{ kind: 'User', name: 'dave' }], roleRef: crRef('metrics') },
  ],
};

type Case = [string, UserInfo, Omit<ResourceAttributes, 'user'>, boolean];
const job = (verb: string, namespace?: string, extra: Partial<ResourceAttributes> = {}) => ({
  verb,
  apiGroup: G,
  resource: 'jobs',
  ...(namespace ? { namespace } : {}),
  ...extra,
});

const CASES: Case[] = [
  // A RoleBinding to a ClusterRole grants it in its own namespace only.
  ['edit in a: create jobs in a', alice, job('create', 'a'), true],
  ['edit in a: delete a job in a', alice, job('delete', 'a', { name: 'x' }), true],
  ['edit in a: cancel a job in a', alice, job('create', 'a', { subresource: 'cancel', name: 'x' }), true],
  ['edit in a: replay a job in a', alice, job('create', 'a', { subresource: 'replay', name: 'x' }), true],
  [
    'edit in a: retry a workflow in a',
    alice,
    { verb: 'create', apiGroup: G, resource: 'workflows', subresource: 'retry', namespace: 'a', name: 'w' },
    true,
  ],
  ['edit in a: delete a job in b', alice, job('delete', 'b', { name: 'x' }), false],
  ['edit in a: list jobs of every namespace', alice, job('list'), false],
  [
    'edit in a: change a queue in a',
    alice,
    { verb: 'update', apiGroup: G, resource: 'queues', namespace: 'a', name: 'default' },
    false,
  ],
  [
    'edit in a: change a quota in a',
    alice,
    { verb: 'patch', apiGroup: G, resource: 'resourcequotas', namespace: 'a', name: 'q' },
    false,
  ],
  [
    'edit in a: create a RoleBinding in a',
    alice,
    { verb: 'create', apiGroup: RBAC, resource: 'rolebindings', namespace: 'a' },
    false,
  ],
  [
    'edit: jobs in another API group',
    alice,
    { verb: 'create', apiGroup: 'batch', resource: 'jobs', namespace: 'a' },
    false,
  ],
  // Groups.
  ['team-b views b', bob, job('list', 'b'), true],
  ['team-b cannot create in b', bob, job('create', 'b'), false],
  ['view includes job status', bob, job('get', 'b', { subresource: 'status', name: 'x' }), true],
  ['view does not include cancel', bob, job('create', 'b', { subresource: 'cancel', name: 'x' }), false],
  // A RoleBinding naming a Role of another namespace finds nothing there.
  ['a Role of a, bound in b, grants nothing', bob, job('create', 'b', { subresource: 'cancel', name: 'x' }), false],
  // Subresources: `jobs` is not `jobs/cancel`, `jobs/cancel` is not `jobs`.
  ['canceller role does not grant the job itself', carol, job('delete', 'a', { name: 'other' }), false],
  ['jobs does not grant jobs/cancel', frank, job('create', 'c', { subresource: 'cancel', name: 'x' }), false],
  ['* verbs on jobs', frank, job('deletecollection', 'c'), true],
  // resourceNames restrict named requests and match nothing unnamed.
  ['resourceNames: the named job', carol, job('get', 'a', { name: 'nightly' }), true],
  ['resourceNames: delete the named job', carol, job('delete', 'a', { name: 'nightly' }), true],
  ['resourceNames: another job', carol, job('get', 'a', { name: 'hourly' }), false],
  ['resourceNames: create names nothing', carol, job('create', 'a'), false],
  ['resourceNames: list names nothing', carol, job('list', 'a'), false],
  // */status.
  [
    '*/status: any status',
    carol,
    { verb: 'get', apiGroup: G, resource: 'queues', subresource: 'status', namespace: 'a', name: 'q' },
    true,
  ],
  [
    '*/status: not the object',
    carol,
    { verb: 'get', apiGroup: G, resource: 'queues', namespace: 'a', name: 'q' },
    false,
  ],
  ['*/status: not another subresource', carol, job('get', 'a', { subresource: 'events', name: 'x' }), false],
  // Wildcards, ClusterRoleBindings everywhere and at the cluster scope.
  ['* resources include subresources', dave, job('create', 'z', { subresource: 'replay', name: 'x' }), true],
  ['ClusterRoleBinding: list across namespaces', dave, job('list'), true],
  [
    'ClusterRoleBinding: cluster-scoped nodes',
    dave,
    { verb: 'get', apiGroup: G, resource: 'nodes', name: 'node-1' },
    true,
  ],
  [
    '* in one group only',
    dave,
    { verb: 'get', apiGroup: '', resource: 'namespaces', name: 'a', namespace: 'a' },
    false,
  ],
  [
    'system:masters is cluster-admin',
    ops,
    { verb: 'delete', apiGroup: RBAC, resource: 'clusterroles', name: 'x' },
    true,
  ],
  // Service accounts: a subject without namespace is the binding's.
  [
    'service account admin in a',
    robot,
    { verb: 'create', apiGroup: RBAC, resource: 'rolebindings', namespace: 'a' },
    true,
  ],
  ['service account not in b', robot, job('get', 'b', { name: 'x' }), false],
  [
    'admin reads but does not write quotas',
    robot,
    { verb: 'update', apiGroup: G, resource: 'resourcequotas', namespace: 'a', name: 'q' },
    false,
  ],
  // Nobody bound.
  ['no binding, no access', erin, job('get', 'a', { name: 'x' }), false],
  [
    'anyone may ask about themselves',
    erin,
    { verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' },
    true,
  ],
];

describe('authorize', () => {
  it.each(CASES)('%s', (_name, who, attributes, allowed) => {
    expect(authorize({ user: who, ...attributes }, policy).allowed).toBe(allowed);
  });

  it('says which binding allowed a request, as Kubernetes words it', () => {
    expect(authorize({ user: alice, ...job('create', 'a') }, policy).reason).toBe(
      'RBAC: allowed by RoleBinding "alice-edit/a" of ClusterRole "edit" to User "alice"',
    );
    expect(authorize({ user: dave, ...job('list') }, policy).reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "dave-fencer" of ClusterRole "everything-in-fencer" to User "dave"',
    );
    expect(authorize({ user: robot, ...job('get', 'a', { name: 'x' }) }, policy).reason).toBe(
      'RBAC: allowed by RoleBinding "robot-admin/a" of ClusterRole "admin" to ServiceAccount "robot/a"',
    );
  });

  it('says when a binding names a role that does not exist', () => {
    expect(authorize({ user: erin, ...job('get', 'a', { name: 'x' }) }, policy)).toEqual({
      allowed: false,
      reason: 'RBAC: role.rbac.fencer.dev "missing" not found',
    });
  });

  it('matches non-resource URLs exactly or by a trailing *, through ClusterRoleBindings only', () => {
    expect(authorize({ user: dave, verb: 'get', path: '/metrics' }, policy).allowed).toBe(true);
    expect(authorize({ user: dave, verb: 'get', path: '/debug/pprof' }, policy).allowed).toBe(true);
    expect(authorize({ user: dave, verb: 'get', path: '/metricsx' }, policy).allowed).toBe(false);
    expect(authorize({ user: dave, verb: 'post', path: '/metrics' }, policy).allowed).toBe(false);
    expect(authorize({ user: alice, verb: 'get', path: '/metrics' }, policy).allowed).toBe(false);
  });

  it('lets a node act only for itself', () => {
    const node = (attributes: Omit<ResourceAttributes, 'user'>) => authorize({ user: node1, ...attributes }, policy);
    const nodes = { apiGroup: G, resource: 'nodes' };
    expect(node({ verb: 'create', ...nodes, subresource: 'heartbeat', name: 'node-1' }).allowed).toBe(true);
    expect(node({ verb: 'create', ...nodes, subresource: 'heartbeat', name: 'node-2' })).toEqual({
      allowed: false,
      reason: 'node "node-1" may act only for itself, not for node "node-2"',
    });
    expect(node({ verb: 'create', ...nodes, subresource: 'reports', name: 'node-2' }).allowed).toBe(false);
    expect(node({ verb: 'get', ...nodes, subresource: 'watch', name: 'node-1' }).allowed).toBe(true);
    // Registering names the node in the body: the route passes it as `node`.
    expect(node({ verb: 'create', ...nodes, node: 'node-1' }).allowed).toBe(true);
    expect(node({ verb: 'create', ...nodes, node: 'node-2' }).allowed).toBe(false);
    expect(node({ verb: 'create', ...nodes })).toEqual({
      allowed: false,
      reason: 'node "node-1" must say which node it acts for',
    });
    const finished = { verb: 'create', apiGroup: G, resource: 'assignments', subresource: 'finished', name: '7' };
    expect(node({ ...finished, node: 'node-1' }).allowed).toBe(true);
    expect(node(finished).allowed).toBe(false); // the route must say whose assignment it is
    expect(
      node({ verb: 'create', apiGroup: G, resource: 'assignments', subresource: 'finished', name: '7', node: 'node-2' })
        .allowed,
    ).toBe(false);
    // A node is no user: it cannot read jobs or submit them.
    expect(node(job('list', 'a')).allowed).toBe(false);
    expect(node(job('create', 'a')).allowed).toBe(false);
    // A user bound to system:node by name is no node: the restriction is for node credentials.
    expect(nodeRestriction({ user: alice, verb: 'create', ...nodes, name: 'node-2' })).toBeNull();
    // A user token cannot open a node's watch.
    expect(
      authorize({ user: alice, verb: 'get', ...nodes, subresource: 'watch', name: 'node-1' }, policy).allowed,
    ).toBe(false);
  });
});

describe('built-in roles', () => {
  it('name only resources and subresources fencer serves', () => {
    for (const role of BUILTIN_CLUSTER_ROLES) {
      for (const rule of role.rules) {
        for (const resource of rule.resources ?? []) {
          if (resource === '*' || rule.apiGroups?.some((g) => g.endsWith('k8s.io'))) continue;
          const [plural, sub] = resource.split('/');
          expect(FENCER_RESOURCES[plural!], `${role.name}: ${resource}`).toBeDefined();
          if (sub !== undefined)
            expect(FENCER_RESOURCES[plural!]!.subresources, `${role.name}: ${resource}`).toContain(sub);
        }
      }
    }
  });

  it('reserve their names and system:', () => {
    expect(isReservedName('admin')).toBe(true);
    expect(isReservedName('system:anything')).toBe(true);
    expect(isReservedName('team-a-admin')).toBe(false);
  });
});

describe('the 403', () => {
  it('words a namespaced refusal as kube-apiserver does', () => {
    const attributes = { user: alice, ...job('delete', 'b', { name: 'x' }) };
    expect(forbiddenMessage(attributes)).toBe(
      'User "alice" cannot delete resource "jobs" in API group "fencer.dev" in the namespace "b"',
    );
    expect(statusOf(forbidden(attributes))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'jobs.fencer.dev "x" is forbidden: User "alice" cannot delete resource "jobs" in API group "fencer.dev" in the namespace "b"',
      reason: 'Forbidden',
      details: { name: 'x', group: 'fencer.dev', kind: 'jobs' },
      code: 403,
    });
  });

  it('names the subresource, the cluster scope, the core group and a path', () => {
    expect(forbiddenMessage({ user: bob, ...job('create', 'b', { subresource: 'cancel', name: 'x' }) })).toBe(
      'User "bob" cannot create resource "jobs/cancel" in API group "fencer.dev" in the namespace "b"',
    );
    expect(forbidden({ user: alice, ...job('list') }).message).toBe(
      'jobs.fencer.dev is forbidden: User "alice" cannot list resource "jobs" in API group "fencer.dev" at the cluster scope',
    );
    expect(
      forbidden({ user: alice, verb: 'get', apiGroup: '', resource: 'namespaces', name: 'b', namespace: 'b' }).message,
    ).toBe(
      'namespaces "b" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "b"',
    );
    expect(forbidden({ user: alice, verb: 'get', path: '/metrics' }).message).toBe(
      'forbidden: User "alice" cannot get path "/metrics"',
    );
  });

  it('adds the authorizer’s reason after a colon', () => {
    const attributes = { user: erin, ...job('get', 'a', { name: 'x' }) };
    expect(forbidden(attributes, authorize(attributes, policy).reason).message).toBe(
      'jobs.fencer.dev "x" is forbidden: User "erin" cannot get resource "jobs" in API group "fencer.dev" in the namespace "a": RBAC: role.rbac.fencer.dev "missing" not found',
    );
  });
});

describe('reviews', () => {
  it('answer kubectl auth can-i yes and no', () => {
    const review = (namespace: string) =>
      accessReview(alice, { resourceAttributes: { namespace, verb: 'delete', group: G, resource: 'jobs' } }, policy)
        .status;
    expect(review('a')).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "alice-edit/a" of ClusterRole "edit" to User "alice"',
    });
    expect(review('b')).toEqual({ allowed: false });
    expect(() => accessReview(alice, {}, policy)).toThrow(/exactly one of/);
  });

  it('list the rules of a namespace for kubectl auth can-i --list', () => {
    const { status } = rulesReview(carol, 'a', policy);
    expect(status.resourceRules).toContainEqual({
      verbs: ['get', 'delete', 'create', 'list'],
      apiGroups: [G],
      resources: ['jobs'],
      resourceNames: ['nightly'],
    });
    expect(status.resourceRules).toContainEqual({
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    });
    expect(status.incomplete).toBe(false);
    expect(rulesReview(carol, 'b', policy).status.resourceRules.some((r) => r.resourceNames)).toBe(false);
    // Besides what dave was granted, what every authenticated user reads (system:discovery).
    expect(rulesReview(dave, 'a', policy).status.nonResourceRules).toEqual([
      {
        verbs: ['get'],
        nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/version', '/version/'],
      },
      { verbs: ['get'], nonResourceURLs: ['/metrics', '/debug/*'] },
    ]);
    expect(rulesReview(erin, 'a', policy).status.evaluationError).toBe('role.rbac.fencer.dev "missing" not found');
  });

  it('say who the caller is for kubectl auth whoami', () => {
    expect(selfSubjectReview({ ...bob, uid: 'u-7' })).toEqual({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
      metadata: { creationTimestamp: null },
      status: { userInfo: { username: 'bob', uid: 'u-7', groups: ['team-b', 'system:authenticated'] } },
    });
  });
});

describe('escalation', () => {
  const edit = BUILTIN_CLUSTER_ROLES.find((r) => r.name === 'edit')!.rules;
  const admin = BUILTIN_CLUSTER_ROLES.find((r) => r.name === 'admin')!.rules;
  const rule = (r: PolicyRule) => r;

  it('lets a holder grant what they hold, and no more', () => {
    expect(uncoveredRules(admin, edit)).toEqual([]);
    expect(uncoveredRules(edit, admin).map((r) => r.resources![0])).toContain('roles');
    expect(uncoveredRules(edit, [rule({ verbs: ['update'], apiGroups: [G], resources: ['queues'] })])).toHaveLength(1);
    expect(uncoveredRules(edit, [rule({ verbs: ['*'], apiGroups: [G], resources: ['jobs'] })])).toEqual([
      { verbs: ['*'], apiGroups: [G], resources: ['jobs'] },
    ]);
  });

  it('judges wildcards, */status and resourceNames as Kubernetes does', () => {
    const owned = [rule({ verbs: ['get'], apiGroups: ['*'], resources: ['*/status'] })];
    expect(
      uncoveredRules(owned, [rule({ verbs: ['get'], apiGroups: [G], resources: ['jobs/status', 'queues/status'] })]),
    ).toEqual([]);
    expect(uncoveredRules(owned, [rule({ verbs: ['get'], apiGroups: [G], resources: ['jobs'] })])).toHaveLength(1);
    const named = [rule({ verbs: ['get'], apiGroups: [G], resources: ['jobs'], resourceNames: ['a'] })];
    expect(
      uncoveredRules(named, [rule({ verbs: ['get'], apiGroups: [G], resources: ['jobs'], resourceNames: ['a'] })]),
    ).toEqual([]);
    expect(uncoveredRules(named, [rule({ verbs: ['get'], apiGroups: [G], resources: ['jobs'] })])).toHaveLength(1);
    const cluster = BUILTIN_CLUSTER_ROLES.find((r) => r.name === 'cluster-admin')!.rules;
    expect(uncoveredRules(cluster, [rule({ verbs: ['get'], nonResourceURLs: ['/metrics'] }), ...admin])).toEqual([]);
  });
});
