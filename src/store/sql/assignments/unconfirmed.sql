-- assignments/unconfirmed: placements their node never confirmed in time. $1 limit.
SELECT id, job_uid FROM assignments
WHERE state = 'Assigned' AND confirm_by < now()
ORDER BY confirm_by LIMIT $1
