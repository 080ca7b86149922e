-- 0031_lease_unheld_since: when the lease was last held by a live leader before the current
-- holder took it (the old holder's last renewal or release). acquired_at minus this is how long
-- the cluster went without a live leader — which, when PostgreSQL itself was away, is also how
-- long no heartbeat could be recorded. The death rule (nodes/dead_candidates.sql) extends a new
-- leader's grace by it, so a node is never declared dead for the database's absence.
ALTER TABLE lease ADD COLUMN unheld_since timestamptz;
