// The ClusterRoles and ClusterRoleBindings every cluster has, in code rather than rows, so no
// write can lose them and an upgrade changes them with the code. Their names are reserved
// (src/api/validation/rbac.ts refuses a stored object of the same name).
//
//   cluster-admin       everything, everywhere. Bound to the group system:masters, which the
//                       admin token of `fencer cluster up` carries.
//   admin               a namespace's owner, granted in one namespace by a RoleBinding: what
//                       edit may, plus its Roles and RoleBindings (never past what admin holds:
//                       src/auth/rbac/escalation.ts). Queues and ResourceQuotas only read: a
//                       queue's weight and a quota are the namespace's share of the whole cluster.
//   edit                submit, cancel, replay, retry and delete jobs, workflows and cronjobs;
//                       read the rest, as view.
//   view                read jobs, workflows, cronjobs, queues, resourcequotas, their status
//                       and events, namespaces, nodes (the latter only through a ClusterRoleBinding).
//   system:node         the node protocol (register, heartbeat, the watch stream, reports),
//                       bound to the group system:nodes and narrowed by the node restriction
//                       (./authorize.ts) to the node the credential names.
//   system:monitoring   reading /metrics, for the group system:monitoring (a scraper's token).
//   system:discovery    reading discovery and OpenAPI (/api, /apis, /openapi, /version), for everyone authenticated.
//   system:basic-user   asking about oneself (kubectl auth can-i, auth whoami), for everyone authenticated.
import {
  AUTHENTICATED_GROUP,
  NODES_GROUP,
  RBAC_GROUP,
  type ClusterRole,
  type ClusterRoleBinding,
  type Policy,
  type PolicyRule,
} from '../../domain/rbac.js';

export const FENCER_GROUP = 'fencer.dev';

/** fencer's API resources with their subresources, as routes declare them; `namespaced` false: cluster-scoped. */
export const FENCER_RESOURCES: Readonly<
  Record<string, { group: string; namespaced: boolean; subresources: readonly string[] }>
> = {
  jobs: { group: FENCER_GROUP, namespaced: true, subresources: ['status', 'cancel', 'replay', 'events'] },
  workflows: { group: FENCER_GROUP, namespaced: true, subresources: ['status', 'cancel', 'retry'] },
  cronjobs: { group: FENCER_GROUP, namespaced: true, subresources: ['status', 'occurrences'] },
  queues: { group: FENCER_GROUP, namespaced: true, subresources: ['status'] },
  resourcequotas: { group: FENCER_GROUP, namespaced: true, subresources: ['status'] },
  nodes: { group: FENCER_GROUP, namespaced: false, subresources: ['status', 'heartbeat', 'watch', 'reports'] },
  assignments: { group: FENCER_GROUP, namespaced: false, subresources: ['started', 'finished', 'abandoned'] },
  namespaces: { group: '', namespaced: false, subresources: [] },
  events: { group: '', namespaced: true, subresources: [] },
  roles: { group: RBAC_GROUP, namespaced: true, subresources: [] },
  rolebindings: { group: RBAC_GROUP, namespaced: true, subresources: [] },
  clusterroles: { group: RBAC_GROUP, namespaced: false, subresources: [] },
  clusterrolebindings: { group: RBAC_GROUP, namespaced: false, subresources: [] },
};

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete', 'deletecollection'];

const VIEW_RULES: PolicyRule[] = [
  {
    verbs: READ,
    apiGroups: [FENCER_GROUP],
    resources: [
      'jobs',
      'jobs/status',
      'jobs/events',
      'workflows',
      'workflows/status',
      'cronjobs',
      'cronjobs/status',
      'cronjobs/occurrences',
      'queues',
      'queues/status',
      'resourcequotas',
      'resourcequotas/status',
      'nodes',
      'nodes/status',
    ],
  },
  { verbs: READ, apiGroups: [''], resources: ['namespaces', 'events'] },
  { verbs: READ, apiGroups: ['events.k8s.io'], resources: ['events'] },
];

const EDIT_RULES: PolicyRule[] = [
  { verbs: WRITE, apiGroups: [FENCER_GROUP], resources: ['jobs', 'workflows', 'cronjobs'] },
  {
    verbs: ['create'],
    apiGroups: [FENCER_GROUP],
    resources: ['jobs/cancel', 'jobs/replay', 'workflows/cancel', 'workflows/retry'],
  },
  ...VIEW_RULES,
];

const ADMIN_RULES: PolicyRule[] = [
  { verbs: [...READ, ...WRITE], apiGroups: [RBAC_GROUP], resources: ['roles', 'rolebindings'] },
  ...EDIT_RULES,
];

export const BUILTIN_CLUSTER_ROLES: readonly ClusterRole[] = [
  {
    name: 'cluster-admin',
    rules: [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ],
  },
  { name: 'admin', rules: ADMIN_RULES },
  { name: 'edit', rules: EDIT_RULES },
  { name: 'view', rules: VIEW_RULES },
  {
    name: 'system:node',
    rules: [
      { verbs: ['create'], apiGroups: [FENCER_GROUP], resources: ['nodes', 'nodes/heartbeat', 'nodes/reports'] },
      { verbs: ['get'], apiGroups: [FENCER_GROUP], resources: ['nodes/watch'] },
      {
        verbs: ['create'],
        apiGroups: [FENCER_GROUP],
        resources: ['assignments/started', 'assignments/finished', 'assignments/abandoned'],
      },
    ],
  },
  {
    // What a scraper reads, as Kubernetes' system:monitoring.
    name: 'system:monitoring',
    rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/healthz', '/readyz'] }],
  },
  {
    // What a client reads before anything else (kubectl's discovery and OpenAPI), as Kubernetes'
    // system:discovery and system:public-info-viewer grant every authenticated user.
    name: 'system:discovery',
    rules: [
      {
        verbs: ['get'],
        nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/version', '/version/'],
      },
    ],
  },
  {
    name: 'system:basic-user',
    rules: [
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ],
  },
];

/** The group of a metrics scraper's token (Prometheus); bound to system:monitoring. */
export const MONITORING_GROUP = 'system:monitoring';

/** The group the admin token carries; bound to cluster-admin. */
export const MASTERS_GROUP = 'system:masters';

const clusterRoleRef = (name: string) => ({ apiGroup: RBAC_GROUP, kind: 'ClusterRole' as const, name });

export const BUILTIN_CLUSTER_ROLE_BINDINGS: readonly ClusterRoleBinding[] = [
  {
    name: 'cluster-admin',
    subjects: [{ kind: 'Group', name: MASTERS_GROUP, apiGroup: RBAC_GROUP }],
    roleRef: clusterRoleRef('cluster-admin'),
  },
  {
    name: 'system:node',
    subjects: [{ kind: 'Group', name: NODES_GROUP, apiGroup: RBAC_GROUP }],
    roleRef: clusterRoleRef('system:node'),
  },
  {
    name: 'system:monitoring',
    subjects: [{ kind: 'Group', name: MONITORING_GROUP, apiGroup: RBAC_GROUP }],
    roleRef: clusterRoleRef('system:monitoring'),
  },
  {
    name: 'system:discovery',
    subjects: [{ kind: 'Group', name: AUTHENTICATED_GROUP, apiGroup: RBAC_GROUP }],
    roleRef: clusterRoleRef('system:discovery'),
  },
  {
    name: 'system:basic-user',
    subjects: [{ kind: 'Group', name: AUTHENTICATED_GROUP, apiGroup: RBAC_GROUP }],
    roleRef: clusterRoleRef('system:basic-user'),
  },
];

/** Whether a stored ClusterRole or ClusterRoleBinding may take this name (built-ins' and `system:` names are reserved). */
export function isReservedName(name: string): boolean {
  return (
    name.startsWith('system:') ||
    BUILTIN_CLUSTER_ROLES.some((r) => r.name === name) ||
    BUILTIN_CLUSTER_ROLE_BINDINGS.some((b) => b.name === name)
  );
}

/** The stored policy with the built-ins in front, so a built-in always wins a name. */
export function withBuiltins(policy: Policy): Policy {
  return {
    roles: policy.roles,
    clusterRoles: [...BUILTIN_CLUSTER_ROLES, ...policy.clusterRoles],
    roleBindings: policy.roleBindings,
    clusterRoleBindings: [...BUILTIN_CLUSTER_ROLE_BINDINGS, ...policy.clusterRoleBindings],
  };
}
