// RBAC manifests (rbac.fencer.dev/v1): the four kinds as Kubernetes users write them become the
// objects the store writes; bad ones are refused with every problem's path and line, with the
// checks Kubernetes makes of its own RBAC objects.
import { describe, expect, it } from 'vitest';
import { readRbacSubmission } from '../../src/api/validation/rbac.js';
import { detailsOf } from '../helpers/validation.js';

const read = (text: string) => readRbacSubmission(text, 'application/yaml');

describe('RBAC validation', () => {
  it('reads a Role with a subresource rule and resourceNames', () => {
    expect(
      read(`apiVersion: rbac.fencer.dev/v1
kind: Role
metadata:
  name: job-canceller
  namespace: team-a
rules:
  - apiGroups: [fencer.dev]
    resources: [jobs/cancel, jobs]
    verbs: [create, get]
    resourceNames: [nightly]
`),
    ).toEqual({
      kind: 'Role',
      object: {
        name: 'job-canceller',
        namespace: 'team-a',
        labels: {},
        rules: [
          {
            verbs: ['create', 'get'],
            apiGroups: ['fencer.dev'],
            resources: ['jobs/cancel', 'jobs'],
            resourceNames: ['nightly'],
          },
        ],
      },
    });
  });

  it('reads a ClusterRole with non-resource URLs and a name with a colon', () => {
    const { object } = read(`apiVersion: rbac.fencer.dev/v1
kind: ClusterRole
metadata: {name: "team:metrics-reader"}
rules:
  - nonResourceURLs: [/metrics]
    verbs: [get]
`);
    expect(object).toEqual({
      name: 'team:metrics-reader',
      labels: {},
      rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
    });
  });

  it('reads a RoleBinding written for Kubernetes, defaulting namespace and groups', () => {
    expect(
      read(`apiVersion: rbac.fencer.dev/v1
kind: RoleBinding
metadata: {name: alice-edits}
subjects:
  - kind: User
    name: alice
    apiGroup: rbac.authorization.k8s.io
  - kind: Group
    name: team-a
  - kind: ServiceAccount
    name: ci
roleRef:
  kind: ClusterRole
  name: edit
  apiGroup: rbac.authorization.k8s.io
`),
    ).toEqual({
      kind: 'RoleBinding',
      object: {
        name: 'alice-edits',
        namespace: 'default',
        labels: {},
        roleRef: { apiGroup: 'rbac.fencer.dev', kind: 'ClusterRole', name: 'edit' },
        subjects: [
          { kind: 'User', name: 'alice', apiGroup: 'rbac.fencer.dev' },
          { kind: 'Group', name: 'team-a', apiGroup: 'rbac.fencer.dev' },
          { kind: 'ServiceAccount', name: 'ci' },
        ],
      },
    });
  });

  it('reads a ClusterRoleBinding', () => {
    const { kind, object } = read(`apiVersion: rbac.fencer.dev/v1
kind: ClusterRoleBinding
metadata: {name: ops-admins}
subjects: [{kind: Group, name: ops}]
roleRef: {kind: ClusterRole, name: cluster-admin}
`);
    expect(kind).toBe('ClusterRoleBinding');
    expect(object).toMatchObject({ roleRef: { kind: 'ClusterRole', name: 'cluster-admin' } });
  });

  it('refuses what Kubernetes refuses in a role, with paths and lines', () => {
    expect(
      detailsOf(() =>
        read(`apiVersion: rbac.fencer.dev/v1
kind: Role
metadata:
  name: bad/name
  namespace: Team_A
rules:
  - verbs: [get]
    nonResourceURLs: [/metrics]
    resources: [jobs]
  - verbs: []
    apiGroups: [fencer.dev]
  - verbs: [get]
    resources: [jobs]
    color: blue
`),
      ),
    ).toEqual([
      { path: 'rules[1].verbs', message: 'must not be empty', line: 10 },
      { path: 'rules[2].color', message: 'unknown field', line: 14 },
      { path: 'metadata.name', message: `"bad/name" is not a valid name: may not contain '/' or '%'`, line: 4 },
      { path: 'metadata.namespace', message: expect.stringMatching(/^"Team_A" is not a valid namespace/), line: 5 },
      { path: 'rules[0].nonResourceURLs', message: 'namespaced rules cannot apply to non-resource URLs', line: 8 },
      {
        path: 'rules[0].nonResourceURLs',
        message: 'rules cannot apply to both regular resources and non-resource URLs',
        line: 8,
      },
      {
        path: 'rules[1].resources',
        message: 'Required value: resource rules must supply at least one resource',
        line: 10,
      },
      {
        path: 'rules[2].apiGroups',
        message: 'Required value: resource rules must supply at least one api group',
        line: 12,
      },
    ]);
  });

  it('refuses reserved names, a namespace on a cluster-scoped kind, a Role in a ClusterRoleBinding and bad subjects', () => {
    const details = detailsOf(() =>
      read(`apiVersion: rbac.fencer.dev/v1
kind: ClusterRoleBinding
metadata: {name: "system:mine", namespace: a}
subjects:
  - {kind: ServiceAccount, name: ci, apiGroup: rbac.fencer.dev}
  - {kind: User, name: bob, apiGroup: example.com}
  - {kind: Robot, name: r2}
roleRef: {kind: Role, name: r}
`),
    ).map((d) => `${d.path}: ${d.message}`);
    expect(details).toEqual([
      'roleRef.kind: "Role" is not one of ClusterRole',
      'subjects[2].kind: "Robot" is not one of User, Group, ServiceAccount',
      'metadata.name: "system:mine" is reserved for a built-in ClusterRoleBinding (and every name starting system:)',
      'metadata.namespace: a ClusterRoleBinding is cluster-scoped: it has no namespace',
      'subjects[0].apiGroup: must be empty for a ServiceAccount',
      'subjects[0].namespace: Required value: a ServiceAccount of a ClusterRoleBinding',
      'subjects[1].apiGroup: "example.com" is not rbac.fencer.dev',
    ]);
  });

  it('refuses another apiVersion or kind before the schema', () => {
    expect(
      detailsOf(() => read('apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\n')).map(
        (d) => d.message,
      ),
    ).toEqual(['"rbac.authorization.k8s.io/v1" is not supported (expected rbac.fencer.dev/v1)']);
    expect(
      detailsOf(() => read('apiVersion: rbac.fencer.dev/v1\nkind: Job\nmetadata: {name: r}\n'))[0]!.message,
    ).toMatch(/not a known kind \(one of Role, ClusterRole, RoleBinding, ClusterRoleBinding\)/);
    expect(detailsOf(() => read('apiVersion: rbac.fencer.dev/v1\nkind: RoleBinding\nmetadata: {name: b}\n'))).toEqual([
      { path: 'roleRef', message: 'Required value', line: 1 },
    ]);
  });
});
