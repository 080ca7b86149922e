-- placement/place: commit a round of placements in one statement (run inside a fenced
-- transaction). Only jobs still Pending and due are claimed; the unique index refuses a second
-- active assignment; the nodes' CHECK constraint refuses any overcommit.
-- $1 uuid[] job uids, $2 text[] nodes, $3 uuid[] assignment ids, $4 epoch, $5 confirm timeout ms.
WITH decision AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS d(job_uid, node, assignment_id)
), claimed AS (
  UPDATE jobs j
  SET phase = 'Assigned', assignment_id = d.assignment_id, node = d.node, epoch = $4,
      reason = NULL, message = NULL, updated_at = now(), resource_version = j.resource_version + 1
  FROM decision d
  WHERE j.uid = d.job_uid AND j.phase = 'Pending' AND j.due_at <= now()
  RETURNING j.uid, j.attempt, j.cpu_millis, j.memory_bytes, j.duration_ms, d.node, d.assignment_id
), assigned AS (
  INSERT INTO assignments (id, job_uid, node, epoch, attempt, state, cpu_millis, memory_bytes, duration_ms, confirm_by)
  SELECT assignment_id, uid, node, $4, attempt, 'Assigned', cpu_millis, memory_bytes, duration_ms,
         now() + $5::bigint * interval '1 millisecond'
  FROM claimed
  RETURNING id
), allocated AS (
  UPDATE nodes n
  SET allocated_cpu_millis = n.allocated_cpu_millis + c.cpu,
      allocated_memory_bytes = n.allocated_memory_bytes + c.memory
  FROM (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory FROM claimed GROUP BY node) c
  WHERE n.name = c.node AND n.state = 'Ready'
  RETURNING n.name
)
SELECT (SELECT count(*) FROM assigned)::int AS placed,
       (SELECT count(*) FROM allocated)::int AS nodes_allocated,
       (SELECT count(DISTINCT node) FROM claimed)::int AS nodes_wanted,
       coalesce((SELECT array_agg(DISTINCT node) FROM claimed), '{}') AS nodes
