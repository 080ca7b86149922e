-- 0016_lease_renewed_at: when the holder last showed it was alive (took, renewed or released the
-- lease), so a new leader can say how long the lease went without a live leader: its takeover
-- time (fencer_leader_takeover_seconds).
ALTER TABLE lease ADD COLUMN renewed_at timestamptz;
UPDATE lease SET renewed_at = expires_at;
