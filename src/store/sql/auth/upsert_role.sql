-- auth/upsert_role: create a Role or ClusterRole, or replace its rules, labels and annotations.
-- Unchanged, it writes nothing and returns no row. $1 kind, $2 namespace ('' for a ClusterRole),
-- $3 name, $4 labels (JSON), $5 annotations (JSON), $6 rules (JSON).
INSERT INTO rbac_roles (kind, namespace, name, labels, annotations, rules)
VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb)
ON CONFLICT (kind, namespace, name) DO UPDATE
SET labels = EXCLUDED.labels, annotations = EXCLUDED.annotations, rules = EXCLUDED.rules,
    updated_at = now(), resource_version = rbac_roles.resource_version + 1
WHERE (rbac_roles.labels, rbac_roles.annotations, rbac_roles.rules)
      IS DISTINCT FROM (EXCLUDED.labels, EXCLUDED.annotations, EXCLUDED.rules)
RETURNING (xmax = 0) AS created
