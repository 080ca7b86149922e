-- bench/throughput_outcome: how the jobs whose name starts with $1 (text) ended: their count by
-- final phase (a JSON object), their assignments in all and those that ended Unconfirmed or
-- Lost, and the attempts they used beyond their first (the sum of attempt - 1).
WITH batch AS (SELECT uid, phase, attempt FROM jobs WHERE starts_with(name, $1))
SELECT (SELECT count(*)::int FROM batch) AS "jobs",
       (SELECT coalesce(jsonb_object_agg(phase, n), '{}') FROM (SELECT phase, count(*)::int AS n FROM batch GROUP BY phase) p) AS "phases",
       (SELECT coalesce(sum(attempt - 1), 0)::int FROM batch) AS "extraAttempts",
       count(a.id)::int AS "assignments",
       (count(a.id) FILTER (WHERE a.state = 'Unconfirmed'))::int AS "unconfirmed",
       (count(a.id) FILTER (WHERE a.state = 'Lost'))::int AS "lost"
FROM batch b JOIN assignments a ON a.job_uid = b.uid
