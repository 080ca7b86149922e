-- quotas/version: a namespace's quota's name and resource version, the row locked until the
-- transaction ends (after quotas/lock). $1 namespace.
SELECT name, resource_version FROM resource_quotas WHERE namespace = $1 FOR UPDATE
