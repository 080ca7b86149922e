// The four RBAC kinds of rbac.fencer.dev/v1 (Role, ClusterRole, RoleBinding, ClusterRoleBinding)
// as the Kubernetes routes serve them: read from src/store/auth.ts, presented as
// rbac.authorization.k8s.io presents them, and written only within what the writer holds. A write
// that would grant more than its author has is refused, as Kubernetes refuses it:
//
//   - a Role or ClusterRole: every rule it grants must be covered by the author's own rules in
//     its namespace (the cluster scope for a ClusterRole), unless the author may `escalate` it;
//   - a binding: the role it names must be covered likewise, unless the author may `bind` it.
//
// Each change sends NOTIFY fencer_auth (migration 0025), and every replica reads its policy again.
import type { ApiContext } from './context.js';
import type { WriteOptions } from './write-options.js';
import type { KubeObject } from './kube/table.js';
import type { RbacObject } from './validation/rbac.js';
import { rehearseIf } from './dry-run.js';
import { KubeError } from './kube/status.js';
import {
  deleteBinding,
  deleteRole,
  listClusterRoleBindings,
  listClusterRoles,
  listRoleBindings,
  listRoles,
  upsertClusterRole,
  upsertClusterRoleBinding,
  upsertRole,
  upsertRoleBinding,
  type StoredMeta,
  type Written,
} from '../store/auth.js';
import type { Db } from '../store/db.js';
import { RBAC_API_VERSION, RBAC_GROUP, type PolicyRule, type RbacKind, type UserInfo } from '../domain/rbac.js';
import { rulesFor, authorize } from '../auth/rbac/authorize.js';
import { uncoveredRules } from '../auth/rbac/escalation.js';
import { withBuiltins } from '../auth/rbac/builtin.js';
import { ForbiddenError } from '../errors/forbidden-error.js';

export const RBAC_PLURALS: Readonly<Record<RbacKind, string>> = {
  Role: 'roles',
  ClusterRole: 'clusterroles',
  RoleBinding: 'rolebindings',
  ClusterRoleBinding: 'clusterrolebindings',
};

type Stored = StoredMeta & {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  rules?: PolicyRule[];
  subjects?: unknown[];
  roleRef?: unknown;
};

/** A stored RBAC object as the API shows it. */
export function presentRbac(kind: RbacKind, stored: Stored): KubeObject {
  const { uid, createdAt, resourceVersion, name, namespace, labels, annotations } = stored;
  return {
    apiVersion: RBAC_API_VERSION,
    kind,
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      uid,
      resourceVersion: String(resourceVersion),
      creationTimestamp: createdAt.toISOString(),
      ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    ...(stored.rules ? { rules: stored.rules } : {}),
    ...(stored.subjects ? { subjects: stored.subjects } : {}),
    ...(stored.roleRef ? { roleRef: stored.roleRef } : {}),
  } as unknown as KubeObject;
}

/** The objects of one RBAC kind, in a namespace (null: every one) or by name. */
export async function listRbac(db: Db, kind: RbacKind, namespace: string | null, name: string | null = null) {
  const stored: Stored[] =
    kind === 'Role'
      ? await listRoles(db, namespace, name)
      : kind === 'ClusterRole'
        ? await listClusterRoles(db, name)
        : kind === 'RoleBinding'
          ? await listRoleBindings(db, namespace, name)
          : await listClusterRoleBindings(db, name);
  return stored.map((s) => presentRbac(kind, s));
}

/**
 * Creates or changes an RBAC object, refused (403) when it grants more than `user` holds; with
 * `expectedVersion`, only if the stored object is still at that version (else Conflict).
 */
export async function writeRbac(
  ctx: ApiContext,
  rbac: RbacObject,
  options: WriteOptions,
  expectedVersion: number | null = null,
): Promise<{ written: Written; object: KubeObject }> {
  const namespace = 'namespace' in rbac.object ? rbac.object.namespace : null;
  const { name } = rbac.object;
  if (ctx.gate !== 'insecure-no-auth') checkEscalation(ctx, rbac, options.user);
  if (expectedVersion !== null) {
    const [current] = await listRbac(ctx.db, rbac.kind, namespace, name);
    if (current && String(expectedVersion) !== String(current.metadata?.resourceVersion))
      throw new KubeError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${RBAC_PLURALS[rbac.kind]}.${RBAC_GROUP} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
  }
  return rehearseIf(options.dryRun, ctx.db, async (db) => {
    const written = await upsert(db, rbac);
    const [object] = await listRbac(db, rbac.kind, namespace, name);
    return { written, object: object! };
  });
}

function upsert(db: Db, rbac: RbacObject): Promise<Written> {
  switch (rbac.kind) {
    case 'Role':
      return upsertRole(db, rbac.object);
    case 'ClusterRole':
      return upsertClusterRole(db, rbac.object);
    case 'RoleBinding':
      return upsertRoleBinding(db, rbac.object);
    case 'ClusterRoleBinding':
      return upsertClusterRoleBinding(db, rbac.object);
  }
}

/** Deletes one; false when there was none. */
export async function removeRbac(
  ctx: ApiContext,
  kind: RbacKind,
  namespace: string | null,
  name: string,
  options: WriteOptions,
): Promise<boolean> {
  const roles = kind === 'Role' || kind === 'ClusterRole';
  return rehearseIf(options.dryRun, ctx.db, (db) =>
    roles ? deleteRole(db, namespace, name) : deleteBinding(db, namespace, name),
  );
}

/** Kubernetes' escalation check (pkg/registry/rbac/validation): a write grants only what its author holds. */
function checkEscalation(ctx: ApiContext, rbac: RbacObject, user: UserInfo | undefined): void {
  if (ctx.gate === 'insecure-no-auth') return;
  if (!user) throw new Error('an RBAC write without an authenticated user');
  const policy = ctx.gate.policy;
  const namespace = 'namespace' in rbac.object ? rbac.object.namespace : '';
  const plural = RBAC_PLURALS[rbac.kind];
  const may = (verb: string, resource: string, name: string) =>
    authorize({ user, verb, apiGroup: RBAC_GROUP, resource, name, ...(namespace ? { namespace } : {}) }, policy)
      .allowed;
  let granted: readonly PolicyRule[];
  if (rbac.kind === 'Role' || rbac.kind === 'ClusterRole') {
    if (may('escalate', plural, rbac.object.name)) return;
    granted = rbac.object.rules;
  } else {
    const ref = rbac.object.roleRef;
    if (may('bind', ref.kind === 'Role' ? 'roles' : 'clusterroles', ref.name)) return;
    const all = withBuiltins(policy);
    const role =
      ref.kind === 'ClusterRole'
        ? all.clusterRoles.find((r) => r.name === ref.name)
        : all.roles.find((r) => r.namespace === namespace && r.name === ref.name);
    // A binding to a role that does not exist grants nothing (yet): Kubernetes allows it only with bind.
    if (!role) throw refused(rbac, user, `${ref.kind.toLowerCase()}.${RBAC_GROUP} "${ref.name}" not found`);
    granted = role.rules;
  }
  const uncovered = uncoveredRules(rulesFor(user, namespace, policy).rules, granted);
  if (uncovered.length > 0)
    throw refused(
      rbac,
      user,
      `user "${user.username}" (groups=${JSON.stringify(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${uncovered.map(describeRule).join('\n')}`,
    );
}

function refused(rbac: RbacObject, user: UserInfo, why: string): ForbiddenError {
  const resource = RBAC_PLURALS[rbac.kind];
  return new ForbiddenError(`${resource}.${RBAC_GROUP} "${rbac.object.name}" is forbidden: ${why}`, {
    group: RBAC_GROUP,
    resource,
    name: rbac.object.name,
  });
}

function describeRule(rule: PolicyRule): string {
  const parts = [
    rule.apiGroups ? `APIGroups:${JSON.stringify(rule.apiGroups)}` : '',
    rule.resources ? `Resources:${JSON.stringify(rule.resources)}` : '',
    rule.resourceNames?.length ? `ResourceNames:${JSON.stringify(rule.resourceNames)}` : '',
    rule.nonResourceURLs ? `NonResourceURLs:${JSON.stringify(rule.nonResourceURLs)}` : '',
    `Verbs:${JSON.stringify(rule.verbs)}`,
  ].filter((p) => p !== '');
  return `{${parts.join(', ')}}`;
}
