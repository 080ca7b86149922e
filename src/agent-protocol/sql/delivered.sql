-- agent-protocol/delivered: replicas sent these assignments to their nodes for the first time (their
-- watch streams), each ago_ms before this statement: the node must claim each within the confirm
-- timeout of that send, so the deadline measures the node, never how long the control plane took
-- to tell it. Recorded in batches a moment after the send, so that a run claimed meanwhile (most
-- of them) costs no write; later snapshots change nothing. Any replica, no fence: a fact about
-- delivery, not a decision. A row locked now is being claimed or ended: it needs no deadline, and
-- waiting for it would deadlock with a claim that locks the same rows in another order (this
-- statement spans nodes); one never recorded is caught by job-reconcile/unconfirmed's undelivered rule.
-- $1 uuid[] ids (no repeats), $2 text[] their nodes, $3 bigint[] ms since each was sent, $4 confirm timeout ms.
WITH free AS (
  SELECT a.id, d.ago_ms
  FROM assignments a
  JOIN unnest($1::uuid[], $2::text[], $3::bigint[]) AS d(id, node, ago_ms) ON a.id = d.id AND a.node = d.node
  WHERE a.state = 'Assigned' AND a.confirm_by IS NULL
  FOR UPDATE OF a SKIP LOCKED
)
UPDATE assignments a SET confirm_by = now() + ($4::bigint - f.ago_ms) * interval '1 millisecond'
FROM free f
WHERE a.id = f.id
