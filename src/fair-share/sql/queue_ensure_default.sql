-- fair-share/queue_ensure_default: every namespace that gets jobs has its queue "default" (weight 1, no
-- limits) unless one was made already. $1 text[] namespaces.
INSERT INTO queues (namespace, name)
SELECT DISTINCT ns, 'default' FROM unnest($1::text[]) AS ns
ON CONFLICT (namespace, name) DO NOTHING
