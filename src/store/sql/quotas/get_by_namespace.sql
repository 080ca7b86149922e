-- quotas/get_by_namespace: the name of a namespace's ResourceQuota, if it has one. $1 namespace.
SELECT name FROM resource_quotas WHERE namespace = $1
