-- jobs/get_many: jobs by name. $1 text[] namespaces, $2 text[] names (pairs).
SELECT j.* FROM jobs j JOIN unnest($1::text[], $2::text[]) AS k(namespace, name) USING (namespace, name)
