-- bench/graphile_unfinished: graphile-worker's jobs not done yet (it deletes a job once it has
-- completed), in its default schema. No parameters.
SELECT count(*)::int AS n FROM graphile_worker._private_jobs
