-- agent-protocol/beat: a node's heartbeat (any replica), in one round trip: fencer_heartbeat() (migration
-- 0029, as 0005 and 0018) records it in the node's heartbeat row and returns the node's state read
-- after that row's lock was had, or 'Superseded' when the credential's incarnation and generation
-- are no longer the node's (nothing recorded). $1 name, $2 incarnation, $3 generation (NULL: not
-- checked, a replica without authentication). NULL state: no such node.
SELECT fencer_heartbeat($1, $2::uuid, $3::bigint) AS state
