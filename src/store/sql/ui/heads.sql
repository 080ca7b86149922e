-- ui/heads: what the dashboard's change feed compares between two reads to tell that the status
-- moved without any object changing: the lease (a new leader or epoch, or none live any more, by
-- the database's clock) and which replicas count as alive. Objects' changes and cluster events
-- come from the watch feed. $1 ms after which a replica counts as gone (as replicas/list.sql).
SELECT holder, epoch, (holder IS NOT NULL AND expires_at > now()) AS live,
       (SELECT coalesce(string_agg(name, ',' ORDER BY name), '') FROM replicas
        WHERE seen_at > now() - $1::bigint * interval '1 millisecond') AS replicas
FROM lease WHERE id = 1
