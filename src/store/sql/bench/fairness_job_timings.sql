-- bench/fairness_job_timings: every job with, as ms since the Unix epoch, when it was created,
-- first placed (its first assignment), first ran (its first Running row in the history) and
-- ended, and its CPU and duration. $1 what a job's group is: 'namespace' or 'queue'.
SELECT j.namespace || '/' || j.name AS key,
       CASE WHEN $1::text = 'namespace' THEN j.namespace ELSE j.queue END AS grp,
       (extract(epoch FROM j.created_at) * 1000)::float8 AS created,
       (extract(epoch FROM a.at) * 1000)::float8 AS placed,
       (extract(epoch FROM r.at) * 1000)::float8 AS running,
       (extract(epoch FROM j.finished_at) * 1000)::float8 AS finished,
       j.cpu_millis::float8 AS cpu, j.duration_ms::float8 AS duration
FROM jobs j
LEFT JOIN (SELECT job_uid, min(at) AS at FROM history WHERE entity = 'job' AND to_state = 'Running' GROUP BY job_uid) r
  ON r.job_uid = j.uid
LEFT JOIN (SELECT job_uid, min(created_at) AS at FROM assignments GROUP BY job_uid) a ON a.job_uid = j.uid
