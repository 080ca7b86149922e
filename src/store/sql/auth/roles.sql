-- auth/roles: Roles and ClusterRoles. $1 kind (NULL: both), $2 namespace (NULL: all; '' for
-- ClusterRoles), $3 name (NULL: all).
SELECT * FROM rbac_roles
WHERE ($1::text IS NULL OR kind = $1) AND ($2::text IS NULL OR namespace = $2) AND ($3::text IS NULL OR name = $3)
ORDER BY kind, namespace, name
