-- bench/hold_overhead: how long succeeded assignments held their node's resources beyond their
-- job's run (placement commit to finish report), split at the start report; ms, by the
-- database's clock. No parameters.
WITH held AS (
  SELECT extract(epoch FROM started_at - created_at) * 1000 AS to_start,
         extract(epoch FROM finished_at - created_at) * 1000 AS held,
         duration_ms
  FROM assignments WHERE state = 'Succeeded')
SELECT count(*)::int AS "assignments",
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY to_start), 0)::float8 AS "toStartP50Ms",
       coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY to_start), 0)::float8 AS "toStartP99Ms",
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY held - duration_ms), 0)::float8 AS "beyondRunP50Ms",
       coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY held - duration_ms), 0)::float8 AS "beyondRunP99Ms",
       coalesce(sum(held - duration_ms) / nullif(sum(held), 0), 0)::float8 AS "shareOfHeld"
FROM held
