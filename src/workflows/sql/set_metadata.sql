-- workflows/set_metadata: a workflow's labels and annotations (its spec never changes after
-- create), only at the resourceVersion the client read when it named one. $1 namespace, $2 name,
-- $3 labels, $4 annotations (JSON), $5 the watch_rv read (or NULL). No row back: gone, or changed since.
UPDATE workflows
SET labels = $3::jsonb, annotations = $4::jsonb, updated_at = now(), resource_version = resource_version + 1
WHERE namespace = $1 AND name = $2 AND ($5::bigint IS NULL OR watch_rv = $5)
RETURNING uid
