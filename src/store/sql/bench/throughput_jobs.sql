-- bench/throughput_jobs: every job whose name starts with $1 (text): when it was created (its
-- insert's now()), when it first ran (its first Running row in the history: the node's start
-- report applied) and when it ended (finished_at; null while it has not), as ms since the Unix
-- epoch, all by the database's clock.
SELECT j.name,
       extract(epoch FROM j.created_at)::float8 * 1000 AS "createdMs",
       extract(epoch FROM min(h.at))::float8 * 1000 AS "startedMs",
       extract(epoch FROM j.finished_at)::float8 * 1000 AS "endedMs"
FROM jobs j
LEFT JOIN history h ON h.job_uid = j.uid AND h.entity = 'job' AND h.to_state = 'Running'
WHERE starts_with(j.name, $1)
GROUP BY j.uid
