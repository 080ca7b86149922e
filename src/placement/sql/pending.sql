-- placement/pending: pending jobs that are due by the database's clock and wait for no need, that
-- could fit somewhere now or nowhere ever; oldest first within each queue and lane, and each
-- queue's lanes get their own slice of the round, so a flood in one queue never hides the
-- others' jobs from it. Returned in arrival order. $1 round limit (split over the lanes with
-- jobs, at least $6 each), $2 most free CPU on a node, $3 most free memory on a node, $4 largest
-- node CPU, $5 largest node memory, $6 least slice.
WITH lanes AS (
  SELECT q.namespace, q.name AS queue, l.lane
  FROM queues q CROSS JOIN (VALUES (0::smallint), (1::smallint), (2::smallint)) AS l(lane)
), ready AS (
  -- A probe per lane (LIMIT 1 keeps it an index probe, never a scan of every pending job).
  SELECT l.* FROM lanes l
  CROSS JOIN LATERAL (SELECT 1 FROM jobs j
                      WHERE j.namespace = l.namespace AND j.queue = l.queue AND j.lane = l.lane
                        AND j.phase = 'Pending' AND NOT j.waiting AND j.due_at <= now()
                      ORDER BY j.created_at, j.uid
                      LIMIT 1) any_ready
)
SELECT j.uid, j.namespace, j.queue, j.lane, j.cpu_millis, j.memory_bytes, j.duration_ms, coalesce(j.path_ms, j.duration_ms) AS path_ms,
       j.node_selector, j.image, j.pool, j.reason
FROM ready r
CROSS JOIN LATERAL (
  SELECT * FROM jobs j
  WHERE j.namespace = r.namespace AND j.queue = r.queue AND j.lane = r.lane
    AND j.phase = 'Pending' AND NOT j.waiting AND j.due_at <= now()
    AND ((j.cpu_millis <= $2 AND j.memory_bytes <= $3) OR j.cpu_millis > $4 OR j.memory_bytes > $5)
  ORDER BY j.created_at, j.uid
  LIMIT greatest($6::int, $1::int / greatest(1, (SELECT count(*) FROM ready))::int)
) j
ORDER BY j.created_at, j.uid
