-- 0019_active_lookups: indexes for two reads that run all the time and scanned whole tables, so
-- their cost grew with every job the cluster had ever run:
-- - a node's watch snapshot counts the failed runs of each job it lists (spec.simulate's
--   failAttempts): an index of the failed runs by job;
-- - job-reconcile's look for jobs whose current run ended: an index of the jobs that are placed
--   or running, by their current assignment.
CREATE INDEX assignments_failed_by_job ON assignments (job_uid) WHERE state = 'Failed';
CREATE INDEX jobs_active_by_assignment ON jobs (assignment_id) WHERE phase IN ('Assigned', 'Running');
