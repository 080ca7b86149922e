-- auth/bindings: RoleBindings and ClusterRoleBindings. $1 kind (NULL: both), $2 namespace (NULL:
-- all; '' for ClusterRoleBindings), $3 name (NULL: all).
SELECT * FROM rbac_bindings
WHERE ($1::text IS NULL OR kind = $1) AND ($2::text IS NULL OR namespace = $2) AND ($3::text IS NULL OR name = $3)
ORDER BY kind, namespace, name
