-- cronjobs/list: CronJobs with their unfinished Jobs. $1 namespace (NULL: all), $2 name (NULL: all).
SELECT c.*,
       coalesce((SELECT jsonb_agg(jsonb_build_object('name', j.name, 'uid', j.uid) ORDER BY j.created_at, j.uid)
                 FROM jobs j
                 WHERE j.cronjob_uid = c.uid AND j.phase IN ('Pending', 'Assigned', 'Running')), '[]'::jsonb) AS active,
       (SELECT max(j.finished_at) FROM jobs j WHERE j.cronjob_uid = c.uid AND j.phase = 'Succeeded') AS newest_success
FROM cronjobs c
WHERE ($1::text IS NULL OR c.namespace = $1) AND ($2::text IS NULL OR c.name = $2)
ORDER BY c.namespace, c.name
