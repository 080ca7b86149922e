-- fair-share/quota_version: a namespace's quota's name and resourceVersion (its latest watch event), the row locked until the
-- transaction ends (after fair-share/quota_lock). $1 namespace.
SELECT name, watch_rv FROM resource_quotas WHERE namespace = $1 FOR UPDATE
