-- jobs/cancel: a user cancelled a job that has not finished. $1 uid.
UPDATE jobs
SET phase = 'Cancelled', reason = 'Cancelled', message = 'cancelled by a user', finished_at = now(),
    updated_at = now(), resource_version = resource_version + 1
WHERE uid = $1 AND phase IN ('Pending', 'Assigned', 'Running')
RETURNING *
