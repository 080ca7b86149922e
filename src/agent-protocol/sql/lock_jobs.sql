-- agent-protocol/lock_jobs: lock the jobs of these assignments, in uid order like jobs/lock, before
-- touching the assignments and their node; and say whether the reporting credential is still the
-- node's (its incarnation and generation those of the node's row: a newer process registered
-- otherwise, and the batch is refused). $1 uuid[] assignment ids, $2 node, $3 incarnation,
-- $4 generation (NULL: not checked, a replica without authentication).
WITH locked AS (
  SELECT uid FROM jobs
  WHERE uid IN (SELECT job_uid FROM assignments WHERE id = ANY($1::uuid[]))
  ORDER BY uid FOR UPDATE
)
SELECT EXISTS (SELECT 1 FROM nodes WHERE name = $2
               AND ($3::uuid IS NULL OR incarnation = $3::uuid)
               AND ($4::bigint IS NULL OR generation = $4::bigint)) AS current,
       (SELECT count(*) FROM locked)::int AS locked
