-- fair-share/quota_delete: delete a namespace's ResourceQuota by name. $1 namespace, $2 name.
DELETE FROM resource_quotas WHERE namespace = $1 AND name = $2 RETURNING uid
