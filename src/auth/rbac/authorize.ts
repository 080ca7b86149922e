// The RBAC authorizer: may this user do this to that? Pure (the policy is passed in), and
// matching as Kubernetes' RBAC authorizer matches, so a Role written for kubectl means here
// what it means there:
//
//   - Rules only allow; nothing denies. A request is allowed when any rule reached through a
//     binding that names the user (or one of their groups, or their service account) allows it.
//   - ClusterRoleBindings are visited first and apply everywhere, at the cluster scope too.
//     RoleBindings apply only to requests in their own namespace, whether they name a Role of
//     that namespace or a ClusterRole (which they then grant in that one namespace).
//   - A request without a namespace (a cluster-scoped resource, a list or watch across every
//     namespace, a non-resource path) is reached only through ClusterRoleBindings.
//   - In a rule, `*` matches any verb, API group or resource (subresources too); `*\/status`
//     matches the status subresource of any resource; `jobs` does not match `jobs/cancel`.
//   - resourceNames restricts a rule to requests that name one of them; a request that names
//     nothing (create, list, a watch of many) never matches such a rule.
//   - nonResourceURLs match a path exactly, or by prefix when they end in `*`.
//
// On top of RBAC, the node restriction (nodeRestriction): a node's credential acts for that
// node alone, whatever a binding grants its group, as Kubernetes' Node authorizer does.
import {
  isResourceRequest,
  NODE_USER_PREFIX,
  NODES_GROUP,
  RBAC_GROUP,
  SERVICE_ACCOUNT_PREFIX,
  type ClusterRole,
  type Decision,
  type Policy,
  type PolicyRule,
  type RequestAttributes,
  type Role,
  type RoleRef,
  type Subject,
  type UserInfo,
} from '../../domain/rbac.js';
import { withBuiltins } from './builtin.js';

const ALL = '*';

/** Where a rule came from, as Kubernetes words it in an allowed decision's reason. */
type Visit = (source: string, rule: PolicyRule) => boolean;

/** Whether `attributes` is allowed by `policy` (plus the built-in roles and bindings), and why. */
export function authorize(attributes: RequestAttributes, policy: Policy): Decision {
  const restricted = nodeRestriction(attributes);
  if (restricted !== null) return { allowed: false, reason: restricted };
  let reason = '';
  const errors = visitRulesFor(attributes.user, namespaceOf(attributes), withBuiltins(policy), (source, rule) => {
    if (!ruleAllows(attributes, rule)) return true;
    reason = `RBAC: allowed by ${source}`;
    return false;
  });
  if (reason !== '') return { allowed: true, reason };
  return { allowed: false, reason: errors.length === 0 ? '' : `RBAC: ${aggregate(errors)}` };
}

/** Every rule that applies to `user` in `namespace` ('' for the cluster scope), and the errors met finding them. */
export function rulesFor(user: UserInfo, namespace: string, policy: Policy): { rules: PolicyRule[]; errors: string[] } {
  const rules: PolicyRule[] = [];
  const errors = visitRulesFor(user, namespace, withBuiltins(policy), (_source, rule) => {
    rules.push(rule);
    return true;
  });
  return { rules, errors };
}

function namespaceOf(attributes: RequestAttributes): string {
  return isResourceRequest(attributes) ? (attributes.namespace ?? '') : '';
}

/**
 * Calls `visit` with each rule of each role bound to `user`, ClusterRoleBindings first, until it
 * returns false. Returns the errors met on the way (a binding whose role does not exist).
 */
function visitRulesFor(user: UserInfo, namespace: string, policy: Policy, visit: Visit): string[] {
  const errors: string[] = [];
  for (const binding of policy.clusterRoleBindings) {
    const subject = binding.subjects.find((s) => appliesTo(user, s, ''));
    if (!subject) continue;
    const rules = roleRules(binding.roleRef, '', policy);
    if (rules === null) {
      errors.push(notFound(binding.roleRef));
      continue;
    }
    const source = `ClusterRoleBinding "${binding.name}" of ${binding.roleRef.kind} "${binding.roleRef.name}" to ${describeSubject(subject, '')}`;
    for (const rule of rules) if (!visit(source, rule)) return errors;
  }
  if (namespace === '') return errors;
  for (const binding of policy.roleBindings) {
    if (binding.namespace !== namespace) continue;
    const subject = binding.subjects.find((s) => appliesTo(user, s, namespace));
    if (!subject) continue;
    const rules = roleRules(binding.roleRef, namespace, policy);
    if (rules === null) {
      errors.push(notFound(binding.roleRef));
      continue;
    }
    const source = `RoleBinding "${binding.name}/${binding.namespace}" of ${binding.roleRef.kind} "${binding.roleRef.name}" to ${describeSubject(subject, namespace)}`;
    for (const rule of rules) if (!visit(source, rule)) return errors;
  }
  return errors;
}

/** The rules of the role a binding names (a Role is looked up in the binding's namespace), or null when it does not exist. */
function roleRules(ref: RoleRef, namespace: string, policy: Policy): readonly PolicyRule[] | null {
  if (ref.kind === 'ClusterRole')
    return policy.clusterRoles.find((r: ClusterRole) => r.name === ref.name)?.rules ?? null;
  if (namespace === '') return null; // a ClusterRoleBinding cannot name a Role (validation refuses it)
  return policy.roles.find((r: Role) => r.namespace === namespace && r.name === ref.name)?.rules ?? null;
}

function notFound(ref: RoleRef): string {
  return `${ref.kind.toLowerCase()}.${RBAC_GROUP} "${ref.name}" not found`;
}

/** Whether a binding's subject is this user. A ServiceAccount without a namespace means the binding's. */
export function appliesTo(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      if (namespace === '') return false;
      return user.username === `${SERVICE_ACCOUNT_PREFIX}${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount')
    return `ServiceAccount "${subject.name}/${subject.namespace || bindingNamespace}"`;
  return `${subject.kind} "${subject.name}"`;
}

/** Kubernetes' aggregate of errors: one alone as it is, several in brackets. */
function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

/** Whether one rule allows the request. */
export function ruleAllows(attributes: RequestAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attributes.verb)) return false;
  if (!isResourceRequest(attributes)) return nonResourceURLMatches(rule, attributes.path);
  const { apiGroup, resource, subresource, name } = attributes;
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (
    apiGroupMatches(rule, apiGroup) &&
    resourceMatches(rule, combined, subresource ?? '') &&
    resourceNameMatches(rule, name ?? '')
  );
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === ALL || v === verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === ALL || g === group);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return (rule.resources ?? []).some(
    (r) => r === ALL || r === combined || (subresource !== '' && r === `${ALL}/${subresource}`),
  );
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (url) => url === ALL || url === path || (url.endsWith(ALL) && path.startsWith(url.slice(0, -1))),
  );
}

/** The node a credential stands for (`system:node:NAME` in group system:nodes), or null for anyone else. */
export function nodeOf(user: UserInfo): string | null {
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return null;
  const name = user.username.slice(NODE_USER_PREFIX.length);
  return name === '' ? null : name;
}

/** What a node's credential acts on: a node's row, or an assignment that belongs to one. */
const NODE_SCOPED_RESOURCES = ['nodes', 'assignments'];

/**
 * Why a node's credential may not make this request, or null when the restriction does not
 * apply. A node acts only for itself: a request about nodes or assignments must say which node
 * it acts for (the route's `node`, or the node's name), and that must be the credential's own,
 * whatever its group is bound to.
 */
export function nodeRestriction(attributes: RequestAttributes): string | null {
  const node = nodeOf(attributes.user);
  if (node === null || !isResourceRequest(attributes)) return null;
  if (!NODE_SCOPED_RESOURCES.includes(attributes.resource)) return null;
  const target = attributes.node ?? (attributes.resource === 'nodes' ? attributes.name : undefined);
  if (target === undefined || target === '') return `node "${node}" must say which node it acts for`;
  return target === node ? null : `node "${node}" may act only for itself, not for node "${target}"`;
}
