-- fair-share/queue_missing: which of these queues do not exist. $1 text[] namespaces, $2 text[] queue names.
SELECT DISTINCT q.namespace, q.name
FROM unnest($1::text[], $2::text[]) AS q(namespace, name)
WHERE NOT EXISTS (SELECT 1 FROM queues e WHERE e.namespace = q.namespace AND e.name = q.name)
ORDER BY q.namespace, q.name
