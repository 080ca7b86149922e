// Who may do what, as stored (migration 0025): revoked tokens, and the RBAC objects the
// authorizer reads (src/auth/rbac/). Any replica writes them, no lease needed: they are what
// users apply, not decisions. The built-in roles are code and never stored.
import type { Db } from './db.js';
import { sql } from './sql.js';
import type {
  ClusterRole,
  ClusterRoleBinding,
  Policy,
  PolicyRule,
  Role,
  RoleBinding,
  RoleRef,
  Subject,
} from '../domain/rbac.js';
import { RBAC_GROUP } from '../domain/rbac.js';
import { ValidationError } from '../errors/validation-error.js';

export type Written = 'created' | 'updated' | 'unchanged';

/** Refuses the token with this id from now on; false when it was already revoked. */
export async function revokeToken(
  db: Db,
  token: { jti: string; expiresAt: Date; actor: string | null; reason: string | null },
): Promise<boolean> {
  const { rowCount } = await db.query(sql('auth/revoke_token'), [
    token.jti,
    token.expiresAt,
    token.actor,
    token.reason,
  ]);
  return rowCount === 1;
}

export async function isTokenRevoked(db: Db, jti: string): Promise<boolean> {
  const { rows } = await db.query<{ revoked: boolean }>(sql('auth/token_revoked'), [jti]);
  return rows[0]?.revoked ?? false;
}

/** The ids of revoked tokens that have not expired yet (what a replica keeps in memory). */
export async function revokedTokens(db: Db): Promise<Array<{ jti: string; expiresAt: Date }>> {
  const { rows } = await db.query<{ jti: string; expires_at: Date }>(sql('auth/revoked_tokens'));
  return rows.map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
}

/** Forgets revocations of tokens expired longer than `skewSeconds` ago; returns how many. */
export async function pruneRevokedTokens(db: Db, skewSeconds: number): Promise<number> {
  return (await db.query(sql('auth/prune_revoked'), [skewSeconds])).rowCount ?? 0;
}

interface RoleRow {
  uid: string;
  kind: 'Role' | 'ClusterRole';
  namespace: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  rules: PolicyRule[];
  created_at: Date;
  updated_at: Date;
  resource_version: number;
}

interface BindingRow {
  uid: string;
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  namespace: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  role_kind: 'Role' | 'ClusterRole';
  role_name: string;
  subjects: Subject[];
  created_at: Date;
  updated_at: Date;
  resource_version: number;
}

/** A stored object's own metadata, beside what the kind holds. */
export interface StoredMeta {
  uid: string;
  createdAt: Date;
  resourceVersion: number;
}

export type StoredRole = Role & StoredMeta;
export type StoredClusterRole = ClusterRole & StoredMeta;
export type StoredRoleBinding = RoleBinding & StoredMeta;
export type StoredClusterRoleBinding = ClusterRoleBinding & StoredMeta;

export async function upsertRole(db: Db, role: Role): Promise<Written> {
  return writtenOf(await writeRole(db, 'Role', role.namespace, role));
}

export async function upsertClusterRole(db: Db, role: ClusterRole): Promise<Written> {
  return writtenOf(await writeRole(db, 'ClusterRole', '', role));
}

async function writeRole(db: Db, kind: RoleRow['kind'], namespace: string, role: ClusterRole) {
  const { rows } = await db.query<{ created: boolean }>(sql('auth/upsert_role'), [
    kind,
    namespace,
    role.name,
    JSON.stringify(role.labels ?? {}),
    JSON.stringify(role.annotations ?? {}),
    JSON.stringify(role.rules),
  ]);
  return rows[0]?.created ?? null;
}

/** Creates or changes a binding; a ValidationError when it would name another role than it does. */
export async function upsertRoleBinding(db: Db, binding: RoleBinding): Promise<Written> {
  return writeBinding(db, 'RoleBinding', binding.namespace, binding);
}

export async function upsertClusterRoleBinding(db: Db, binding: ClusterRoleBinding): Promise<Written> {
  return writeBinding(db, 'ClusterRoleBinding', '', binding);
}

async function writeBinding(
  db: Db,
  kind: BindingRow['kind'],
  namespace: string,
  binding: ClusterRoleBinding,
): Promise<Written> {
  const { roleRef } = binding;
  const { rows } = await db.query<{ created: boolean | null; existing_role: string | null }>(
    sql('auth/upsert_binding'),
    [
      kind,
      namespace,
      binding.name,
      JSON.stringify(binding.labels ?? {}),
      JSON.stringify(binding.annotations ?? {}),
      roleRef.kind,
      roleRef.name,
      JSON.stringify(binding.subjects),
    ],
  );
  const { created, existing_role: existing } = rows[0] ?? { created: null, existing_role: null };
  if (created === null && existing !== null && existing !== `${roleRef.kind}/${roleRef.name}`) {
    throw new ValidationError([
      {
        path: 'roleRef',
        message: `cannot change roleRef (it is ${existing}): delete the ${kind} and create it again`,
      },
    ]);
  }
  return writtenOf(created);
}

function writtenOf(created: boolean | null): Written {
  return created === null ? 'unchanged' : created ? 'created' : 'updated';
}

export async function listRoles(
  db: Db,
  namespace: string | null = null,
  name: string | null = null,
): Promise<StoredRole[]> {
  const { rows } = await db.query<RoleRow>(sql('auth/roles'), ['Role', namespace, name]);
  return rows.map((r) => ({ ...metaOf(r), namespace: r.namespace, rules: r.rules }));
}

export async function listClusterRoles(db: Db, name: string | null = null): Promise<StoredClusterRole[]> {
  const { rows } = await db.query<RoleRow>(sql('auth/roles'), ['ClusterRole', '', name]);
  return rows.map((r) => ({ ...metaOf(r), rules: r.rules }));
}

export async function listRoleBindings(
  db: Db,
  namespace: string | null = null,
  name: string | null = null,
): Promise<StoredRoleBinding[]> {
  const { rows } = await db.query<BindingRow>(sql('auth/bindings'), ['RoleBinding', namespace, name]);
  return rows.map((r) => ({ ...metaOf(r), namespace: r.namespace, subjects: r.subjects, roleRef: roleRefOf(r) }));
}

export async function listClusterRoleBindings(db: Db, name: string | null = null): Promise<StoredClusterRoleBinding[]> {
  const { rows } = await db.query<BindingRow>(sql('auth/bindings'), ['ClusterRoleBinding', '', name]);
  return rows.map((r) => ({ ...metaOf(r), subjects: r.subjects, roleRef: roleRefOf(r) }));
}

/** Deletes a Role (namespace given) or a ClusterRole (namespace null); false when there was none. */
export async function deleteRole(db: Db, namespace: string | null, name: string): Promise<boolean> {
  const kind = namespace === null ? 'ClusterRole' : 'Role';
  return ((await db.query(sql('auth/delete_role'), [kind, namespace ?? '', name])).rowCount ?? 0) > 0;
}

/** Deletes a RoleBinding (namespace given) or a ClusterRoleBinding (namespace null); false when there was none. */
export async function deleteBinding(db: Db, namespace: string | null, name: string): Promise<boolean> {
  const kind = namespace === null ? 'ClusterRoleBinding' : 'RoleBinding';
  return ((await db.query(sql('auth/delete_binding'), [kind, namespace ?? '', name])).rowCount ?? 0) > 0;
}

/** Everything the authorizer reads, in two queries (the built-ins are added by the authorizer). */
export async function readPolicy(db: Db): Promise<Policy> {
  const [roles, bindings] = await Promise.all([
    db.query<RoleRow>(sql('auth/roles'), [null, null, null]),
    db.query<BindingRow>(sql('auth/bindings'), [null, null, null]),
  ]);
  return {
    roles: roles.rows
      .filter((r) => r.kind === 'Role')
      .map((r) => ({ name: r.name, namespace: r.namespace, rules: r.rules })),
    clusterRoles: roles.rows.filter((r) => r.kind === 'ClusterRole').map((r) => ({ name: r.name, rules: r.rules })),
    roleBindings: bindings.rows
      .filter((b) => b.kind === 'RoleBinding')
      .map((b) => ({ name: b.name, namespace: b.namespace, subjects: b.subjects, roleRef: roleRefOf(b) })),
    clusterRoleBindings: bindings.rows
      .filter((b) => b.kind === 'ClusterRoleBinding')
      .map((b) => ({ name: b.name, subjects: b.subjects, roleRef: roleRefOf(b) })),
  };
}

function metaOf(row: RoleRow | BindingRow) {
  return {
    name: row.name,
    labels: row.labels,
    ...(Object.keys(row.annotations).length > 0 ? { annotations: row.annotations } : {}),
    uid: row.uid,
    createdAt: row.created_at,
    resourceVersion: Number(row.resource_version),
  };
}

function roleRefOf(row: BindingRow): RoleRef {
  return { apiGroup: RBAC_GROUP, kind: row.role_kind, name: row.role_name };
}
