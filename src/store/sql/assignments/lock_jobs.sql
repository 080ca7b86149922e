-- assignments/lock_jobs: lock the jobs of these assignments, in uid order like jobs/lock, before
-- touching the assignments and their node. $1 uuid[] assignment ids.
SELECT uid FROM jobs
WHERE uid IN (SELECT job_uid FROM assignments WHERE id = ANY($1::uuid[]))
ORDER BY uid FOR UPDATE
