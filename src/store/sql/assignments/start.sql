-- assignments/start: the node started these. Only an active assignment on that node may start;
-- an id missing from the result is not active there (the node stops it). Starting twice is
-- harmless. With each first start, how long after its placement and after its job was due it came
-- (seconds, for /metrics). $1 uuid[] ids, $2 node.
UPDATE assignments a SET state = 'Running', started_at = coalesce(a.started_at, now())
FROM jobs j
WHERE a.id = ANY($1::uuid[]) AND a.node = $2 AND a.state IN ('Assigned', 'Running') AND j.uid = a.job_uid
RETURNING a.id, a.job_uid,
          CASE WHEN a.started_at = now() THEN extract(epoch FROM now() - a.created_at)::float8 END AS since_placed,
          CASE WHEN a.started_at = now() THEN extract(epoch FROM now() - j.due_at)::float8 END AS since_due
