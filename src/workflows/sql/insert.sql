-- workflows/insert: accept a workflow (any replica, or a CronJob's occurrence: the leader); its
-- jobs are inserted by jobs/insert in the same transaction. A name already taken gives no row
-- back. $1 uid, $2 namespace, $3 name, $4 labels (JSON), $5 spec (JSON), $6 cronjob uid or NULL,
-- $7 annotations (JSON).
INSERT INTO workflows (uid, namespace, name, labels, spec, cronjob_uid, annotations) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7::jsonb)
ON CONFLICT (namespace, name) DO NOTHING
RETURNING *
