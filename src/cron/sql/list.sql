-- cron/list: CronJobs with their unfinished Jobs, in (namespace, name) order. $1 namespace
-- (NULL: all), $2 name (NULL: all); a page (as jobs/list): after $3/$4 when $3 is not NULL, at most
-- $5 (all when NULL).
SELECT c.*,
       coalesce((SELECT jsonb_agg(jsonb_build_object('name', j.name, 'uid', j.uid) ORDER BY j.created_at, j.uid)
                 FROM jobs j
                 WHERE j.cronjob_uid = c.uid AND j.phase IN ('Pending', 'Assigned', 'Running')), '[]'::jsonb) AS active,
       (SELECT max(j.finished_at) FROM jobs j WHERE j.cronjob_uid = c.uid AND j.phase = 'Succeeded') AS newest_success
FROM cronjobs c
WHERE ($1::text IS NULL OR c.namespace = $1) AND ($2::text IS NULL OR c.name = $2)
  AND ($3::text IS NULL OR (c.namespace, c.name) > ($3::text, $4::text))
ORDER BY c.namespace, c.name
LIMIT $5::bigint
