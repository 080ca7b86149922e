-- metrics/jobs: jobs by namespace, queue and phase for /metrics (the leader's, at each scrape),
-- with, of the pending ones, how many no node can ever hold (Unschedulable) and how long the one
-- due longest has waited that some node could hold (seconds since it was submitted or due, if
-- later; an Unschedulable job is counted apart, it would wait forever). No parameters.
SELECT namespace, queue, phase, count(*)::int AS jobs,
       (count(*) FILTER (WHERE phase = 'Pending' AND reason = 'Unschedulable'))::int AS unschedulable,
       coalesce(extract(epoch FROM now() - min(greatest(created_at, due_at)) FILTER (WHERE phase = 'Pending' AND NOT waiting AND due_at <= now() AND reason IS DISTINCT FROM 'Unschedulable')), 0)::float8 AS oldest_pending_seconds
FROM jobs
GROUP BY namespace, queue, phase
