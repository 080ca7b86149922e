-- jobs/list: jobs of one namespace, or of all when $1 is NULL, oldest first, carrying every label
-- of $2 (a JSON object; '{}' for all) and, when $3 is not NULL, in that phase.
-- $1 namespace, $2 labels (JSON), $3 phase.
SELECT * FROM jobs
WHERE ($1::text IS NULL OR namespace = $1) AND labels @> $2::jsonb AND ($3::text IS NULL OR phase = $3)
ORDER BY created_at, name
