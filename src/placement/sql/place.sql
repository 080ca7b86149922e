-- placement/place: commit a round of placements in one statement (run inside a fenced
-- transaction). Only jobs still Pending, due and waiting for no need are claimed; the unique index refuses a second
-- active assignment; the chosen nodes are locked and must still be Ready; the assignments'
-- trigger (migration 0006) adds what they hold to their nodes, where the CHECK constraint
-- refuses any overcommit, and the limits trigger (migration 0009) any queue or quota past its limits.
-- $1 uuid[] job uids, $2 text[] nodes, $3 uuid[] assignment ids, $4 epoch. confirm_by stays NULL until
-- a replica sends the assignment to its node (agent-protocol/delivered).
-- Also each job placed: its assignment, node and wait in seconds (from its submit or its due time, if later).
-- Each chosen node is told at commit (NOTIFY fencer_assignments, as nodes/notify.sql does), in this
-- statement to spare the round a round trip; a round rolled back (a node gone) tells no one.
WITH decision AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS d(job_uid, node, assignment_id)
), claimed AS (
  UPDATE jobs j
  SET phase = 'Assigned', assignment_id = d.assignment_id, node = d.node, epoch = $4,
      reason = NULL, message = NULL, updated_at = now(), resource_version = j.resource_version + 1
  FROM decision d
  WHERE j.uid = d.job_uid AND j.phase = 'Pending' AND j.due_at <= now() AND NOT j.waiting
  RETURNING j.uid, j.attempt, j.cpu_millis, j.memory_bytes, j.duration_ms, j.namespace, j.queue, d.node, d.assignment_id,
            greatest(j.created_at, j.due_at) AS ready_at
), assigned AS (
  INSERT INTO assignments (id, job_uid, node, epoch, attempt, state, cpu_millis, memory_bytes, duration_ms, namespace, queue)
  SELECT assignment_id, uid, node, $4, attempt, 'Assigned', cpu_millis, memory_bytes, duration_ms, namespace, queue
  FROM claimed
  RETURNING id
), ready AS (
  SELECT n.name FROM nodes n
  WHERE n.name IN (SELECT node FROM claimed) AND n.state = 'Ready'
  FOR UPDATE
), notified AS (
  SELECT pg_notify('fencer_assignments', node) FROM (SELECT DISTINCT node FROM claimed) c
)
SELECT (SELECT count(*) FROM assigned)::int AS placed,
       (SELECT count(*) FROM ready)::int AS nodes_ready,
       (SELECT count(DISTINCT node) FROM claimed)::int AS nodes_wanted,
       (SELECT count(*) FROM notified)::int AS nodes_told,
       coalesce((SELECT json_agg(json_build_object('job', uid, 'assignment', assignment_id, 'node', node,
                                                   'wait', greatest(0, extract(epoch FROM now() - ready_at))::float8)) FROM claimed), '[]') AS claimed
