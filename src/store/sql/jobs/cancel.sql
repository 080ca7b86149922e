-- jobs/cancel: a user cancelled jobs that have not finished. $1 uuid[] uids.
UPDATE jobs
SET phase = 'Cancelled', waiting = false, reason = 'Cancelled', message = 'cancelled by a user', finished_at = now(),
    updated_at = now(), resource_version = resource_version + 1
WHERE uid = ANY($1::uuid[]) AND phase IN ('Pending', 'Assigned', 'Running')
RETURNING *
