-- 0031_lease_grace: where the death rule's grace counts from after the control plane went unheard
-- (nodes/dead_candidates.sql). grace_from: when the current holder took the lease, or renewed it
-- after a gap (a database that stalled and came back; lease/renew.sql says how long). lapse: the
-- longest the lease went without a sign of its holder since some holder was last heard for a full
-- silence timeout in a row. When PostgreSQL itself was away, that is how long no heartbeat could
-- be recorded; carried over short-lived leaders, so that a second election right after an outage
-- does not take the outage's grace away.
ALTER TABLE lease ADD COLUMN grace_from timestamptz, ADD COLUMN lapse interval NOT NULL DEFAULT interval '0';
UPDATE lease SET grace_from = acquired_at;
