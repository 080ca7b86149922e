// A refusal worded as kube-apiserver words it, so a user reads the same sentence from fencer as
// from Kubernetes and knows which rule to ask for: the resource is the combined
// `resource/subresource` a rule must name, and the scope says whether a RoleBinding can grant
// it (in the namespace "b") or only a ClusterRoleBinding (at the cluster scope).
import { isResourceRequest, type RequestAttributes } from '../../domain/rbac.js';
import { ForbiddenError } from '../../errors/forbidden-error.js';

/** `User "alice" cannot delete resource "jobs" in API group "fencer.dev" in the namespace "b"`. */
export function forbiddenMessage(attributes: RequestAttributes): string {
  const user = attributes.user.username;
  if (!isResourceRequest(attributes)) return `User "${user}" cannot ${attributes.verb} path "${attributes.path}"`;
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  const what = `User "${user}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}"`;
  return attributes.namespace ? `${what} in the namespace "${attributes.namespace}"` : `${what} at the cluster scope`;
}

/**
 * The 403 for a refused request (src/api/kube/status.ts turns it into a Status with reason
 * Forbidden): `jobs.fencer.dev "x" is forbidden: User ...`, with the authorizer's reason after
 * a colon when it has one (a binding to a role that does not exist).
 */
export function forbidden(attributes: RequestAttributes, reason = ''): ForbiddenError {
  const why = reason === '' ? forbiddenMessage(attributes) : `${forbiddenMessage(attributes)}: ${reason}`;
  if (!isResourceRequest(attributes))
    return new ForbiddenError(`forbidden: ${why}`, { group: '', resource: '', name: '' });
  const { apiGroup: group, resource, name = '' } = attributes;
  const qualified = group === '' ? resource : `${resource}.${group}`;
  const message = name === '' ? `${qualified} is forbidden: ${why}` : `${qualified} "${name}" is forbidden: ${why}`;
  return new ForbiddenError(message, { group, resource, name });
}
