-- jobs/delete: remove a job; its history stays. $1 uid.
DELETE FROM jobs WHERE uid = $1 RETURNING *
