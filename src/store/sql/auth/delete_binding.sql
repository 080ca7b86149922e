-- auth/delete_binding: delete a RoleBinding or ClusterRoleBinding. $1 kind, $2 namespace, $3 name.
DELETE FROM rbac_bindings WHERE kind = $1 AND namespace = $2 AND name = $3 RETURNING uid
