-- ui/heads: what the dashboard's change feed compares between two reads to tell that the
-- leadership or the cluster events moved (the objects' changes come from the watch feed).
-- No parameters.
SELECT holder, epoch, (holder IS NOT NULL AND expires_at > now()) AS live,
       (SELECT max(id) FROM cluster_events) AS event
FROM lease WHERE id = 1
