-- placement/take_tokens: a round took placement tokens from namespaces' buckets (refilled to
-- now first; the round planned with no more than the bucket had when it read it, and the
-- bucket only fills since). Placement is this column's one writer. $1 text[] namespaces, $2 int[] tokens taken.
UPDATE resource_quotas r
SET tokens = least(r.rate_burst::float8, coalesce(r.tokens + r.rate_per_second * extract(epoch FROM now() - r.tokens_at), r.rate_burst::float8)) - t.taken,
    tokens_at = now()
FROM unnest($1::text[], $2::int[]) AS t(namespace, taken)
WHERE r.namespace = t.namespace AND r.rate_per_second IS NOT NULL
