-- auth/upsert_binding: create a RoleBinding or ClusterRoleBinding, or replace its subjects,
-- labels and annotations; never its roleRef (Kubernetes keeps it immutable: a binding means one
-- role for its whole life). Returns one row: created true (new), false (changed), NULL (nothing
-- written), and the role the binding names now ('Kind/name', NULL when it did not exist), from
-- which the caller tells "unchanged" from "roleRef may not change". $1 kind, $2 namespace ('' for
-- a ClusterRoleBinding), $3 name, $4 labels (JSON), $5 annotations (JSON), $6 roleRef kind,
-- $7 roleRef name, $8 subjects (JSON).
WITH existing AS (
  SELECT role_kind || '/' || role_name AS role FROM rbac_bindings WHERE kind = $1 AND namespace = $2 AND name = $3
), written AS (
  INSERT INTO rbac_bindings (kind, namespace, name, labels, annotations, role_kind, role_name, subjects)
  VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8::jsonb)
  ON CONFLICT (kind, namespace, name) DO UPDATE
  SET labels = EXCLUDED.labels, annotations = EXCLUDED.annotations, subjects = EXCLUDED.subjects,
      updated_at = now(), resource_version = rbac_bindings.resource_version + 1
  WHERE (rbac_bindings.role_kind, rbac_bindings.role_name) = (EXCLUDED.role_kind, EXCLUDED.role_name)
    AND (rbac_bindings.labels, rbac_bindings.annotations, rbac_bindings.subjects)
        IS DISTINCT FROM (EXCLUDED.labels, EXCLUDED.annotations, EXCLUDED.subjects)
  RETURNING (xmax = 0) AS created
)
SELECT (SELECT created FROM written) AS created, (SELECT role FROM existing) AS existing_role
