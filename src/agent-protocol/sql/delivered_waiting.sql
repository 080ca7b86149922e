-- agent-protocol/delivered_waiting: the broken variant of agent-protocol/delivered (delivery-skip-locked,
-- src/testing/broken-guards.ts): it waits for rows a claim or an end has locked. Test-only.
-- $1 uuid[] ids, $2 text[] their nodes, $3 bigint[] ms since each was sent, $4 confirm timeout ms.
UPDATE assignments a SET confirm_by = now() + ($4::bigint - d.ago_ms) * interval '1 millisecond'
FROM unnest($1::uuid[], $2::text[], $3::bigint[]) AS d(id, node, ago_ms)
WHERE a.id = d.id AND a.node = d.node AND a.state = 'Assigned' AND a.confirm_by IS NULL
