// Role, ClusterRole, RoleBinding and ClusterRoleBinding manifests (rbac.fencer.dev/v1) into the
// objects the store writes, or one ValidationError listing every problem with its path and line,
// as for the other kinds. Beyond the CRDs' schemas, the checks Kubernetes makes of its own RBAC
// objects: names are path segments (`system:` is allowed there, but reserved here for the
// built-ins), a rule is either for resources or for non-resource URLs, a Role cannot name URLs,
// a ClusterRoleBinding names a ClusterRole (its CRD's enum), and a subject's apiGroup fits its kind.
import {
  RBAC_API_VERSION,
  RBAC_GROUP,
  RBAC_KINDS,
  type ClusterRole,
  type ClusterRoleBinding,
  type PolicyRule,
  type RbacKind,
  type Role,
  type RoleBinding,
  type RoleRef,
  type Subject,
} from '../../domain/rbac.js';
import { isDns1123Subdomain } from '../../domain/names.js';
import { isReservedName } from '../../auth/rbac/builtin.js';
import type { Manifest, ManifestPath } from './manifest.js';
import { crdValidator, schemaProblems, type SchemaProblem } from './schema.js';
import {
  annotationProblems,
  describe,
  fail,
  isFields,
  labelProblems,
  nameProblems,
  objectOf,
  type Fields,
} from './job.js';
import { onlyManifest } from './queue.js';

/** Kubernetes' own API group for RBAC: taken as rbac.fencer.dev in a roleRef or subject, so its manifests apply here. */
const KUBERNETES_RBAC_GROUP = 'rbac.authorization.k8s.io';
const DEFAULT_NAMESPACE = 'default';
const NAME_MAX = 253;

export type RbacObject =
  | { kind: 'Role'; object: Role }
  | { kind: 'ClusterRole'; object: ClusterRole }
  | { kind: 'RoleBinding'; object: RoleBinding }
  | { kind: 'ClusterRoleBinding'; object: ClusterRoleBinding };

/** A body holding exactly one RBAC document (YAML or JSON). */
export function readRbacSubmission(text: string, contentType: string | undefined): RbacObject {
  return validateRbac(onlyManifest(text, contentType, 'Role, ClusterRole, RoleBinding or ClusterRoleBinding'));
}

export function validateRbac(manifest: Manifest): RbacObject {
  const object = objectOf(manifest);
  const kind = object.kind;
  const identity = identityProblems(object);
  if (identity.length > 0) fail(manifest, identity);
  const rbacKind = kind as RbacKind;
  const namespaced = rbacKind === 'Role' || rbacKind === 'RoleBinding';
  const problems = [
    ...schemaProblems(crdValidator(`crds/${rbacKind.toLowerCase()}.yaml`), object),
    ...metadataProblems(object, rbacKind, namespaced),
    ...(rbacKind === 'Role' || rbacKind === 'ClusterRole'
      ? rulesProblems(object.rules, namespaced)
      : bindingProblems(object, namespaced)),
  ];
  if (problems.length > 0) fail(manifest, problems);
  return toRbacObject(object, rbacKind);
}

function identityProblems(object: Fields): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const expected = RBAC_KINDS.join(', ');
  if (object.apiVersion === undefined)
    problems.push({ path: ['apiVersion'], message: `Required value (expected ${RBAC_API_VERSION})` });
  else if (object.apiVersion !== RBAC_API_VERSION)
    problems.push({
      path: ['apiVersion'],
      message: `${describe(object.apiVersion)} is not supported (expected ${RBAC_API_VERSION})`,
    });
  if (object.kind === undefined) problems.push({ path: ['kind'], message: `Required value (one of ${expected})` });
  else if (!(RBAC_KINDS as readonly unknown[]).includes(object.kind))
    problems.push({ path: ['kind'], message: `${describe(object.kind)} is not a known kind (one of ${expected})` });
  return problems;
}

/** Kubernetes' rule for RBAC names: a path segment (not . or .., no / or %). */
export function rbacNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name === '') errors.push('must not be empty');
  if (name === '.' || name === '..') errors.push(`may not be '${name}'`);
  if (name.includes('/') || name.includes('%')) errors.push("may not contain '/' or '%'");
  if (name.length > NAME_MAX) errors.push(`must be no more than ${NAME_MAX} characters`);
  return errors;
}

function metadataProblems(object: Fields, kind: RbacKind, namespaced: boolean): SchemaProblem[] {
  const metadata = isFields(object.metadata) ? object.metadata : {};
  const problems: SchemaProblem[] = [];
  const { name, generateName, namespace } = metadata;
  if (name === undefined)
    problems.push({ path: ['metadata', 'name'], message: `Required value: a ${kind} is named by metadata.name` });
  if (typeof name === 'string') {
    for (const why of rbacNameErrors(name))
      problems.push({ path: ['metadata', 'name'], message: `${describe(name)} is not a valid name: ${why}` });
    if (!namespaced && isReservedName(name))
      problems.push({
        path: ['metadata', 'name'],
        message: `${describe(name)} is reserved for a built-in ${kind} (and every name starting system:)`,
      });
  }
  if (generateName !== undefined)
    problems.push({ path: ['metadata', 'generateName'], message: `not supported for a ${kind}: name it` });
  if (namespaced && typeof namespace === 'string')
    problems.push(...nameProblems(['metadata', 'namespace'], namespace, 'namespace'));
  if (!namespaced && namespace !== undefined)
    problems.push({ path: ['metadata', 'namespace'], message: `a ${kind} is cluster-scoped: it has no namespace` });
  problems.push(...labelProblems(['metadata', 'labels'], metadata.labels));
  problems.push(...annotationProblems(metadata.annotations));
  return problems;
}

function rulesProblems(rules: unknown, namespaced: boolean): SchemaProblem[] {
  if (!Array.isArray(rules)) return [];
  return rules.flatMap((rule, i) => (isFields(rule) ? ruleProblems(rule, ['rules', i], namespaced) : []));
}

/** As Kubernetes' ValidatePolicyRule. */
function ruleProblems(rule: Fields, at: ManifestPath, namespaced: boolean): SchemaProblem[] {
  const count = (field: string) => (Array.isArray(rule[field]) ? (rule[field] as unknown[]).length : 0);
  const problems: SchemaProblem[] = [];
  if (count('nonResourceURLs') > 0) {
    if (namespaced)
      problems.push({
        path: [...at, 'nonResourceURLs'],
        message: 'namespaced rules cannot apply to non-resource URLs',
      });
    if (count('apiGroups') > 0 || count('resources') > 0 || count('resourceNames') > 0)
      problems.push({
        path: [...at, 'nonResourceURLs'],
        message: 'rules cannot apply to both regular resources and non-resource URLs',
      });
    return problems;
  }
  if (count('apiGroups') === 0)
    problems.push({
      path: [...at, 'apiGroups'],
      message: 'Required value: resource rules must supply at least one api group',
    });
  if (count('resources') === 0)
    problems.push({
      path: [...at, 'resources'],
      message: 'Required value: resource rules must supply at least one resource',
    });
  return problems;
}

function bindingProblems(object: Fields, namespaced: boolean): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const roleRef = isFields(object.roleRef) ? object.roleRef : {};
  if (roleRef.apiGroup !== undefined && !isRbacGroup(roleRef.apiGroup))
    problems.push({ path: ['roleRef', 'apiGroup'], message: `${describe(roleRef.apiGroup)} is not ${RBAC_GROUP}` });
  if (typeof roleRef.name === 'string')
    for (const why of rbacNameErrors(roleRef.name))
      problems.push({ path: ['roleRef', 'name'], message: `${describe(roleRef.name)} is not a valid name: ${why}` });
  const subjects = Array.isArray(object.subjects) ? object.subjects : [];
  subjects.forEach((subject, i) => {
    if (isFields(subject)) problems.push(...subjectProblems(subject, ['subjects', i], namespaced));
  });
  return problems;
}

/** As Kubernetes' ValidateRoleBindingSubject. */
function subjectProblems(subject: Fields, at: ManifestPath, namespaced: boolean): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const { kind, name, apiGroup, namespace } = subject;
  if (kind === 'ServiceAccount') {
    if (apiGroup !== undefined && apiGroup !== '')
      problems.push({ path: [...at, 'apiGroup'], message: 'must be empty for a ServiceAccount' });
    if (typeof name === 'string' && !isDns1123Subdomain(name))
      problems.push({ path: [...at, 'name'], message: `${describe(name)} is not a valid service account name` });
    if (!namespaced && (namespace === undefined || namespace === ''))
      problems.push({
        path: [...at, 'namespace'],
        message: 'Required value: a ServiceAccount of a ClusterRoleBinding',
      });
  } else if ((kind === 'User' || kind === 'Group') && apiGroup !== undefined && !isRbacGroup(apiGroup)) {
    problems.push({ path: [...at, 'apiGroup'], message: `${describe(apiGroup)} is not ${RBAC_GROUP}` });
  }
  return problems;
}

function isRbacGroup(value: unknown): boolean {
  return value === RBAC_GROUP || value === KUBERNETES_RBAC_GROUP;
}

/** Only called once the object passed every check, so the casts hold. */
function toRbacObject(object: Fields, kind: RbacKind): RbacObject {
  const metadata = object.metadata as {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  const base = {
    name: metadata.name,
    labels: { ...metadata.labels },
    ...(metadata.annotations && Object.keys(metadata.annotations).length > 0
      ? { annotations: { ...metadata.annotations } }
      : {}),
  };
  const namespace = metadata.namespace ?? DEFAULT_NAMESPACE;
  switch (kind) {
    case 'Role':
      return { kind, object: { ...base, namespace, rules: rulesOf(object.rules) } };
    case 'ClusterRole':
      return { kind, object: { ...base, rules: rulesOf(object.rules) } };
    case 'RoleBinding':
      return {
        kind,
        object: { ...base, namespace, roleRef: roleRefOf(object.roleRef), subjects: subjectsOf(object.subjects) },
      };
    case 'ClusterRoleBinding':
      return { kind, object: { ...base, roleRef: roleRefOf(object.roleRef), subjects: subjectsOf(object.subjects) } };
  }
}

/** Rules as written, each list copied and empty ones dropped (they match nothing either way). */
function rulesOf(value: unknown): PolicyRule[] {
  return ((value as PolicyRule[] | undefined) ?? []).map((rule) => {
    const out: PolicyRule = { verbs: [...rule.verbs] };
    for (const field of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const list = rule[field];
      if (list && list.length > 0) out[field] = [...list];
    }
    return out;
  });
}

function roleRefOf(value: unknown): RoleRef {
  const ref = value as RoleRef;
  return { apiGroup: RBAC_GROUP, kind: ref.kind, name: ref.name };
}

/** Subjects with Kubernetes' defaults: a User or Group in rbac.fencer.dev, a ServiceAccount in no group. */
function subjectsOf(value: unknown): Subject[] {
  return ((value as Subject[] | undefined) ?? []).map((s) =>
    s.kind === 'ServiceAccount'
      ? { kind: s.kind, name: s.name, ...(s.namespace ? { namespace: s.namespace } : {}) }
      : { kind: s.kind, name: s.name, apiGroup: RBAC_GROUP },
  );
}
