-- fair-share/quota_lock: serialize a change of a namespace's quota with placements into the namespace
-- (the limits trigger takes the same lock, migration 0010). $1 namespace.
SELECT pg_advisory_xact_lock(fencer_quota_lock_key($1))
