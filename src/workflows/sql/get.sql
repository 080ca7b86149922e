-- workflows/get: one workflow. $1 namespace, $2 name.
SELECT * FROM workflows WHERE namespace = $1 AND name = $2
