-- auth/delete_role: delete a Role or ClusterRole; bindings that name it stay and grant nothing
-- (the authorizer says the role is not found), as in Kubernetes. $1 kind, $2 namespace, $3 name.
DELETE FROM rbac_roles WHERE kind = $1 AND namespace = $2 AND name = $3 RETURNING uid
