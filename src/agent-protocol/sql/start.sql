-- agent-protocol/start: the node started these (its claims), and their jobs are Running, in one
-- statement. Only an active assignment on that node may start; an id missing from the result is
-- not active there (the node stops it). Starting twice is harmless. A job moves only while the
-- assignment is still its current one (as jobs/set_phase). Any start tells placement, at commit,
-- of room in the node's unclaimed backlog (placement/round_state.sql) that no job's pending state shows
-- (NOTIFY fencer_room, as placement/notify_room.sql does).
-- With each first start, how long after its placement and after its job was due it came
-- (seconds, for /metrics). $1 uuid[] ids, $2 node.
WITH started AS (
  UPDATE assignments a SET state = 'Running', started_at = coalesce(a.started_at, now())
  FROM jobs j
  WHERE a.id = ANY($1::uuid[]) AND a.node = $2 AND a.state IN ('Assigned', 'Running') AND j.uid = a.job_uid
  RETURNING a.id, a.job_uid,
            CASE WHEN a.started_at = now() THEN extract(epoch FROM now() - a.created_at)::float8 END AS since_placed,
            CASE WHEN a.started_at = now() THEN extract(epoch FROM now() - j.due_at)::float8 END AS since_due
), running AS (
  UPDATE jobs j
  SET phase = 'Running', reason = NULL, message = NULL, updated_at = now(),
      resource_version = j.resource_version + 1, started_at = coalesce(j.started_at, now())
  FROM started s
  WHERE j.uid = s.job_uid AND j.assignment_id = s.id
  RETURNING j.uid
), room AS (
  SELECT pg_notify('fencer_room', '') FROM (SELECT 1 FROM started LIMIT 1) any_start
)
SELECT s.id, s.since_placed, s.since_due, (SELECT count(*) FROM running)::int AS running, (SELECT count(*) FROM room)::int AS told
FROM started s
