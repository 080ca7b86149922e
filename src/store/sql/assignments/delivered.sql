-- assignments/delivered: a replica is about to send these assignments to their node for the first
-- time (its watch stream): the node must claim each within the confirm timeout from now, so the
-- deadline measures the node, never how long the control plane took to tell it. Later snapshots
-- change nothing. Any replica, no fence: a fact about delivery, not a decision.
-- $1 uuid[] ids, $2 node, $3 confirm timeout ms.
UPDATE assignments SET confirm_by = now() + $3::bigint * interval '1 millisecond'
WHERE id = ANY($1::uuid[]) AND node = $2 AND state = 'Assigned' AND confirm_by IS NULL
