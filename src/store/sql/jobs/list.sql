-- jobs/list: jobs in (namespace, name) order: of one namespace, or of all when $1 is NULL,
-- carrying every label of $2 (a JSON object; NULL for any), in phase $3 when it is not NULL, after
-- the job $4/$5 when $4 is not NULL (keyset pagination: the key of the previous page's last job),
-- at most $6 of them (all when NULL). The order is the (namespace, name) index's: a page walks it
-- from that key on and stops at its limit, however many jobs there are (NULL rather than '{}'
-- for no labels, so the planner does not guess how many rows `labels @> '{}'` keeps).
-- $1 namespace, $2 labels (JSON), $3 phase, $4 namespace and $5 name to start after, $6 limit.
SELECT * FROM jobs
WHERE ($1::text IS NULL OR namespace = $1) AND ($2::jsonb IS NULL OR labels @> $2::jsonb) AND ($3::text IS NULL OR phase = $3)
  AND ($4::text IS NULL OR (namespace, name) > ($4::text, $5::text))
ORDER BY namespace, name
LIMIT $6::bigint
