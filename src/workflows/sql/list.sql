-- workflows/list: workflows of one namespace, or of all when $1 is NULL, in (namespace, name)
-- order, after the workflow $2/$3 when $2 is not NULL (keyset pagination, as jobs/list), at most
-- $4 (all when NULL). $1 namespace, $2 namespace and $3 name to start after, $4 limit.
SELECT * FROM workflows
WHERE ($1::text IS NULL OR namespace = $1) AND ($2::text IS NULL OR (namespace, name) > ($2::text, $3::text))
ORDER BY namespace, name
LIMIT $4::bigint
