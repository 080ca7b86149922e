-- fair-share/queue_delete: delete a queue none of whose jobs is still to finish (their history keeps its
-- name). Returns the queue, and how many unfinished jobs kept it. $1 namespace, $2 name.
WITH unfinished AS (
  SELECT count(*)::int AS n FROM jobs
  WHERE namespace = $1 AND queue = $2 AND phase IN ('Pending', 'Assigned', 'Running')
), gone AS (
  DELETE FROM queues WHERE namespace = $1 AND name = $2 AND (SELECT n FROM unfinished) = 0
  RETURNING uid
)
SELECT EXISTS (SELECT 1 FROM queues WHERE namespace = $1 AND name = $2) AS existed,
       (SELECT count(*) FROM gone)::int AS deleted, (SELECT n FROM unfinished) AS unfinished
