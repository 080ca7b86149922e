-- workflows/list: workflows of one namespace, or of all when $1 is NULL, oldest first. $1 namespace.
SELECT * FROM workflows WHERE $1::text IS NULL OR namespace = $1 ORDER BY created_at, name
