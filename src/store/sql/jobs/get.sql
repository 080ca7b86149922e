-- jobs/get: one job by namespace and name. $1 namespace, $2 name.
SELECT * FROM jobs WHERE namespace = $1 AND name = $2
