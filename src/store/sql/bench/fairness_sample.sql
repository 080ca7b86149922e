-- bench/fairness_sample: one sample of the fairness benchmark: CPU allocated on all nodes, jobs
-- pending by '<namespace>/<queue>' (null when none), jobs not ended. No parameters.
SELECT (SELECT coalesce(sum(allocated_cpu_millis), 0)::float8 FROM nodes) AS cpu,
       (SELECT jsonb_object_agg(key, n)
        FROM (SELECT namespace || '/' || queue AS key, count(*)::int AS n
              FROM jobs WHERE phase = 'Pending' GROUP BY 1) p) AS pending,
       (SELECT count(*)::int FROM jobs WHERE phase NOT IN ('Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead')) AS unfinished
