// `fencer get` and `fencer delete` of the RBAC kinds (docs/security.md): where each lives (they
// have no /api/v1 route, only their Kubernetes path under rbac.fencer.dev/v1) and what `get`
// prints, as kubectl prints Kubernetes' own Roles and bindings. Pure, like ./output.ts.
import YAML from 'yaml';
import type { RoleRef, Subject } from '../domain/rbac.js';
import { renderTable } from '../report/table.js';
import { humanAge, type RenderOptions } from './output.js';

export const RBAC_GROUP = 'rbac.fencer.dev';

export interface RbacType {
  kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';
  plural: string;
  namespaced: boolean;
}

const RBAC_TYPES: readonly RbacType[] = [
  { kind: 'Role', plural: 'roles', namespaced: true },
  { kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  { kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
  { kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false },
];

/** The RBAC kind a user names (role, roles, roles.rbac.fencer.dev, ...), or undefined for any other type. */
export function rbacTypeOf(type: string): RbacType | undefined {
  const t = type.toLowerCase().replace(/\.rbac\.(fencer\.dev|authorization\.k8s\.io)$/, '');
  return RBAC_TYPES.find((r) => t === r.plural || t === r.kind.toLowerCase());
}

/** Its Kubernetes path: of one object, or of its list (in `namespace`; every namespace without one). */
export function rbacPath(type: RbacType, namespace: string | undefined, name?: string): string {
  const where = type.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `/apis/${RBAC_GROUP}/v1${where}/${type.plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

/** An RBAC object as the API serves it (what `get` reads of it). */
export interface RbacObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; creationTimestamp?: string };
  roleRef?: RoleRef;
  subjects?: Subject[];
}

/** kubectl's columns: NAME and CREATED AT for roles; NAME, ROLE and AGE for bindings (-o wide: who). */
export function renderRbac(items: RbacObject[], type: RbacType, options: RenderOptions): string {
  const document =
    options.single && items.length === 1
      ? items[0]
      : { apiVersion: `${RBAC_GROUP}/v1`, kind: `${type.kind}List`, items };
  switch (options.format) {
    case 'json':
      return JSON.stringify(document, null, 2) + '\n';
    case 'yaml':
      return YAML.stringify(document);
    case 'name':
      return items.map((item) => `${type.kind.toLowerCase()}.${RBAC_GROUP}/${item.metadata.name}\n`).join('');
  }
  const bindings = type.kind.endsWith('Binding');
  const wide = options.format === 'wide';
  const header = bindings ? ['NAME', 'ROLE', 'AGE'] : ['NAME', 'CREATED AT'];
  if (bindings && wide) header.push('USERS', 'GROUPS', 'SERVICEACCOUNTS');
  const namespaced = options.allNamespaces && type.namespaced;
  if (namespaced) header.unshift('NAMESPACE');
  const rows = items.map((item) => {
    const row = [item.metadata.name];
    if (!bindings) row.push(item.metadata.creationTimestamp ?? '<unknown>');
    else {
      row.push(
        `${item.roleRef?.kind ?? ''}/${item.roleRef?.name ?? ''}`,
        humanAge(item.metadata.creationTimestamp, options.now),
      );
      if (wide) {
        const named = (kind: Subject['kind']) =>
          (item.subjects ?? [])
            .filter((s) => s.kind === kind)
            .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name))
            .join(', ');
        row.push(named('User'), named('Group'), named('ServiceAccount'));
      }
    }
    if (namespaced) row.unshift(item.metadata.namespace ?? '');
    return row;
  });
  return renderTable(header, rows);
}
