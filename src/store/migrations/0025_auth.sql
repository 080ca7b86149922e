-- 0025_auth: who may do what (docs/security.md). Tokens revoked before they expire, by their id
-- (jti), and the four kinds of rbac.fencer.dev/v1: Roles and ClusterRoles in rbac_roles,
-- RoleBindings and ClusterRoleBindings in rbac_bindings. A cluster-scoped object's namespace is
-- '' (a unique key needs a value, and NULLs are never equal). The built-in ClusterRoles and
-- ClusterRoleBindings (cluster-admin, admin, edit, view, system:node, ...) are code, not rows
-- (src/auth/rbac/builtin.ts). Every change of these tables sends NOTIFY fencer_auth with the
-- table's name (src/store/channels.ts), so a replica can keep the policy and the revocations in
-- memory and read them again only when they change.
CREATE TABLE revoked_tokens (
  jti        text PRIMARY KEY CHECK (jti <> ''),
  -- The token's own expiry: once past it (and the clock skew), the verifier refuses the token
  -- anyway and the row can go (auth/prune_revoked.sql).
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz NOT NULL DEFAULT now(),
  revoked_by text,
  reason     text
);
CREATE INDEX revoked_tokens_by_expiry ON revoked_tokens (expires_at);

CREATE TABLE rbac_roles (
  uid              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind             text NOT NULL CHECK (kind IN ('Role', 'ClusterRole')),
  namespace        text NOT NULL,
  name             text NOT NULL CHECK (name <> ''),
  labels           jsonb NOT NULL DEFAULT '{}',
  annotations      jsonb NOT NULL DEFAULT '{}',
  -- PolicyRule[] as written, checked by src/api/validation/rbac.ts.
  rules            jsonb NOT NULL CHECK (jsonb_typeof(rules) = 'array'),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  resource_version bigint NOT NULL DEFAULT 1,
  UNIQUE (kind, namespace, name),
  CONSTRAINT rbac_role_scope CHECK ((kind = 'ClusterRole') = (namespace = ''))
);

CREATE TABLE rbac_bindings (
  uid              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind             text NOT NULL CHECK (kind IN ('RoleBinding', 'ClusterRoleBinding')),
  namespace        text NOT NULL,
  name             text NOT NULL CHECK (name <> ''),
  labels           jsonb NOT NULL DEFAULT '{}',
  annotations      jsonb NOT NULL DEFAULT '{}',
  -- roleRef; it never changes once written, as in Kubernetes (auth/upsert_binding.sql).
  role_kind        text NOT NULL CHECK (role_kind IN ('Role', 'ClusterRole')),
  role_name        text NOT NULL CHECK (role_name <> ''),
  -- Subject[] as written.
  subjects         jsonb NOT NULL CHECK (jsonb_typeof(subjects) = 'array'),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  resource_version bigint NOT NULL DEFAULT 1,
  UNIQUE (kind, namespace, name),
  CONSTRAINT rbac_binding_scope CHECK ((kind = 'ClusterRoleBinding') = (namespace = '')),
  -- A ClusterRoleBinding grants everywhere, and a Role exists in one namespace only.
  CONSTRAINT rbac_cluster_binding_role CHECK (kind = 'RoleBinding' OR role_kind = 'ClusterRole')
);

CREATE FUNCTION fencer_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fencer_auth', TG_TABLE_NAME);
  RETURN NULL;
END $$;
CREATE TRIGGER revoked_tokens_changed AFTER INSERT OR UPDATE OR DELETE ON revoked_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_auth_changed();
CREATE TRIGGER rbac_roles_changed AFTER INSERT OR UPDATE OR DELETE ON rbac_roles
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_auth_changed();
CREATE TRIGGER rbac_bindings_changed AFTER INSERT OR UPDATE OR DELETE ON rbac_bindings
  FOR EACH STATEMENT EXECUTE FUNCTION fencer_auth_changed();
