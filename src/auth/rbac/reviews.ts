// The answers to what a user may ask about themselves, in the shapes kubectl sends and reads:
//
//   kubectl auth can-i VERB RESOURCE    SelfSubjectAccessReview (authorization.k8s.io/v1)
//   kubectl auth can-i --list           SelfSubjectRulesReview: the rules that apply in a namespace
//   kubectl auth whoami                 SelfSubjectReview (authentication.k8s.io/v1)
//
// Pure: the user comes from the authenticator, the policy from the store.
import type { Policy, PolicyRule, RequestAttributes, UserInfo } from '../../domain/rbac.js';
import { ValidationError } from '../../errors/validation-error.js';
import { authorize, rulesFor } from './authorize.js';

export interface ResourceAttributesSpec {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export interface NonResourceAttributesSpec {
  path?: string;
  verb?: string;
}

export interface SelfSubjectAccessReviewSpec {
  resourceAttributes?: ResourceAttributesSpec;
  nonResourceAttributes?: NonResourceAttributesSpec;
}

export interface SelfSubjectAccessReview {
  apiVersion: 'authorization.k8s.io/v1';
  kind: 'SelfSubjectAccessReview';
  metadata: { creationTimestamp: null };
  spec: SelfSubjectAccessReviewSpec;
  status: { allowed: boolean; reason?: string };
}

/** Whether `user` may do what the review's spec asks (kubectl auth can-i). */
export function accessReview(
  user: UserInfo,
  spec: SelfSubjectAccessReviewSpec,
  policy: Policy,
): SelfSubjectAccessReview {
  const decision = authorize(attributesOf(user, spec), policy);
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) },
  };
}

function attributesOf(user: UserInfo, spec: SelfSubjectAccessReviewSpec): RequestAttributes {
  const { resourceAttributes: r, nonResourceAttributes: n } = spec;
  if ((r === undefined) === (n === undefined)) {
    throw new ValidationError([
      { path: 'spec', message: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' },
    ]);
  }
  if (n !== undefined) return { user, verb: n.verb ?? '', path: n.path ?? '' };
  const a = r as ResourceAttributesSpec;
  return {
    user,
    verb: a.verb ?? '',
    apiGroup: a.group ?? '',
    resource: a.resource ?? '',
    ...(a.subresource ? { subresource: a.subresource } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    ...(a.name ? { name: a.name } : {}),
  };
}

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface SelfSubjectRulesReview {
  apiVersion: 'authorization.k8s.io/v1';
  kind: 'SelfSubjectRulesReview';
  metadata: { creationTimestamp: null };
  spec: { namespace: string };
  status: {
    resourceRules: ResourceRule[];
    nonResourceRules: NonResourceRule[];
    incomplete: boolean;
    evaluationError?: string;
  };
}

/**
 * The rules that apply to `user` in `namespace` (kubectl auth can-i --list): every ClusterRoleBinding's
 * and the namespace's RoleBindings', as Kubernetes lists them (a rule with both resources and
 * URLs, which validation refuses, would be listed in both). The node restriction is not a rule
 * and is not shown.
 */
export function rulesReview(user: UserInfo, namespace: string, policy: Policy): SelfSubjectRulesReview {
  const { rules, errors } = rulesFor(user, namespace, policy);
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    metadata: { creationTimestamp: null },
    spec: { namespace },
    status: {
      resourceRules: rules.filter((r) => (r.resources ?? []).length > 0).map(resourceRule),
      nonResourceRules: rules
        .filter((r) => (r.nonResourceURLs ?? []).length > 0)
        .map((r) => ({ verbs: [...r.verbs], nonResourceURLs: [...(r.nonResourceURLs ?? [])] })),
      incomplete: false,
      ...(errors.length > 0 ? { evaluationError: errors.join(', ') } : {}),
    },
  };
}

function resourceRule(rule: PolicyRule): ResourceRule {
  return {
    verbs: [...rule.verbs],
    ...(rule.apiGroups?.length ? { apiGroups: [...rule.apiGroups] } : {}),
    ...(rule.resources?.length ? { resources: [...rule.resources] } : {}),
    ...(rule.resourceNames?.length ? { resourceNames: [...rule.resourceNames] } : {}),
  };
}

export interface SelfSubjectReview {
  apiVersion: 'authentication.k8s.io/v1';
  kind: 'SelfSubjectReview';
  metadata: { creationTimestamp: null };
  status: { userInfo: { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> } };
}

/** Who the caller is, as the authenticator found them (kubectl auth whoami). */
export function selfSubjectReview(user: UserInfo): SelfSubjectReview {
  return {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
    metadata: { creationTimestamp: null },
    status: {
      userInfo: {
        username: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: [...user.groups],
        ...(user.extra && Object.keys(user.extra).length > 0 ? { extra: user.extra } : {}),
      },
    },
  };
}
