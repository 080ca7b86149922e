// Who is asking and what they may do, in Kubernetes' shapes: the user an authenticator found
// (authentication/v1 UserInfo) and the four RBAC kinds of rbac.fencer.dev/v1, which read as
// rbac.authorization.k8s.io/v1's do. Plain data shared by the validation, the store and the
// authorizer (src/auth/rbac/); nothing here decides anything.

export const RBAC_GROUP = 'rbac.fencer.dev';
export const RBAC_API_VERSION = `${RBAC_GROUP}/v1`;

/** Who made a request, as an authenticator vouches for it. */
export interface UserInfo {
  /** `alice`; a node is `system:node:NAME`, a Kubernetes service account `system:serviceaccount:NS:NAME`. */
  username: string;
  /** Every authenticated user is in `system:authenticated`. */
  groups: string[];
  uid?: string;
  /** What else the token said (a node credential's incarnation and generation). */
  extra?: Record<string, string[]>;
}

/** The group every authenticated request carries (as Kubernetes adds it). */
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** The group a node's credential carries; the node restriction applies to its members. */
export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';
export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

export const RBAC_KINDS = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'] as const;
export type RbacKind = (typeof RBAC_KINDS)[number];

/**
 * verbs × apiGroups × resources × resourceNames, or verbs × nonResourceURLs. `*` matches any
 * verb, group or resource; `*\/status` any resource's status subresource; `jobs/cancel` one
 * subresource. resourceNames restricts only requests that name an object (never create or list).
 */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export type SubjectKind = 'User' | 'Group' | 'ServiceAccount';

export interface Subject {
  kind: SubjectKind;
  name: string;
  /** A ServiceAccount's namespace; in a RoleBinding it defaults to the binding's. */
  namespace?: string;
  /** rbac.fencer.dev for User and Group (rbac.authorization.k8s.io is taken as the same), empty for ServiceAccount. */
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole';
  name: string;
}

export interface ObjectIdentity {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Role extends ObjectIdentity {
  namespace: string;
  rules: PolicyRule[];
}

export interface ClusterRole extends ObjectIdentity {
  rules: PolicyRule[];
}

export interface RoleBinding extends ObjectIdentity {
  namespace: string;
  subjects: Subject[];
  /** A Role of the same namespace, or a ClusterRole granted in this namespace only. */
  roleRef: RoleRef;
}

export interface ClusterRoleBinding extends ObjectIdentity {
  subjects: Subject[];
  /** Always a ClusterRole, granted in every namespace and at the cluster scope. */
  roleRef: RoleRef;
}

/** Everything the authorizer reads: the stored objects (the built-in ones are added by src/auth/rbac/builtin.ts). */
export interface Policy {
  roles: readonly Role[];
  clusterRoles: readonly ClusterRole[];
  roleBindings: readonly RoleBinding[];
  clusterRoleBindings: readonly ClusterRoleBinding[];
}

export const EMPTY_POLICY: Policy = { roles: [], clusterRoles: [], roleBindings: [], clusterRoleBindings: [] };

/** A request against an API resource, as the route declares it. */
export interface ResourceAttributes {
  user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection (POST is create, as in Kubernetes). */
  verb: string;
  /** '' for the core group (namespaces, events). */
  apiGroup: string;
  /** The plural: jobs. */
  resource: string;
  /** cancel, replay, status, ... */
  subresource?: string;
  /** Absent for a cluster-scoped resource and for a list or watch across namespaces. */
  namespace?: string;
  /** The object's name; absent for create, list and watch of many, as in Kubernetes. */
  name?: string;
  /**
   * The node a node-protocol request acts for (from its path, or a registration's body). Read
   * only by the node restriction (a node acts for itself alone), never by rule matching.
   */
  node?: string;
}

/** A request for a path that is no API resource (/metrics, /api/v1/status). */
export interface NonResourceAttributes {
  user: UserInfo;
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

export function isResourceRequest(attributes: RequestAttributes): attributes is ResourceAttributes {
  return !('path' in attributes);
}

export interface Decision {
  allowed: boolean;
  /** Which binding allowed it, or what went wrong looking (a binding to a missing role); '' when nothing matched. */
  reason: string;
}
