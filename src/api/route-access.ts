// The attributes fencer's /api/v1 routes declare (src/api/auth-gate.ts), built the same way by
// every route file: an object of a path, a collection of a path or of `?namespace=` (none: every
// namespace, which needs the cluster scope), the namespaces a create's documents name.
import type { FastifyRequest } from 'fastify';
import { FENCER_GROUP } from '../auth/rbac/builtin.js';
import type { Access } from './auth-gate.js';

interface PathParams {
  namespace?: string;
  name?: string;
}

/** `verb` on the object the path names (:namespace, :name), or on its subresource. */
export function onObject(verb: string, resource: string, subresource?: string) {
  return (request: FastifyRequest): Access => {
    const { namespace, name } = request.params as PathParams;
    return {
      verb,
      apiGroup: FENCER_GROUP,
      resource,
      ...(subresource ? { subresource } : {}),
      ...(namespace ? { namespace } : {}),
      ...(name ? { name } : {}),
    };
  };
}

/** `verb` on a collection: the path's :namespace, else `?namespace=`, else every namespace (cluster scope). */
export function onCollection(verb: string, resource: string, subresource?: string, apiGroup = FENCER_GROUP) {
  return (request: FastifyRequest): Access => {
    const namespace = (request.params as PathParams).namespace || (request.query as PathParams).namespace || undefined;
    return { verb, apiGroup, resource, ...(subresource ? { subresource } : {}), ...(namespace ? { namespace } : {}) };
  };
}

/** A create of objects in the namespaces they name: one attribute set per namespace. */
export function createdIn(resource: string, namespaces: Iterable<string>): Access[] {
  return [...new Set(namespaces)].map((namespace) => ({ verb: 'create', apiGroup: FENCER_GROUP, resource, namespace }));
}

/** The verb of a request for objects, as Kubernetes names it from the method (and ?watch). */
export function kubeVerb(request: FastifyRequest, named: boolean): string {
  switch (request.method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default: {
      if (named) return 'get';
      const watch = (request.query as { watch?: string }).watch;
      return watch === 'true' || watch === '1' ? 'watch' : 'list';
    }
  }
}
