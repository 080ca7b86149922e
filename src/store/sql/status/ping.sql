-- status/ping: readiness: the database answers. No parameters.
SELECT 1
