-- fair-share/quota_pending_count: the jobs not yet placed in each of these namespaces. $1 text[] namespaces.
SELECT ns AS namespace, (SELECT count(*) FROM jobs j WHERE j.namespace = ns AND j.phase = 'Pending')::int AS pending
FROM unnest($1::text[]) AS ns
