-- agent-protocol/watch_open: a node opened its watch stream on a replica. $1 name, $2 session, $3 replica,
-- $4 the node's attempt number (NULL: unnumbered), $5 its incarnation, $6 its generation (the
-- credential's; NULL: any, a replica without authentication).
-- An attempt older than the one recorded, or from another incarnation or generation, changes
-- nothing and comes back with superseded = true; `current` says whether the incarnation and
-- generation are still the node's (false: a newer process registered).
WITH target AS (SELECT name, state, ($5::uuid IS NULL OR incarnation = $5::uuid)
                                    AND ($6::bigint IS NULL OR generation = $6::bigint) AS current
                FROM nodes WHERE name = $1),
opened AS (
  UPDATE nodes
  SET watch_session = $2, watch_replica = $3, disconnected_at = NULL, watch_attempt = coalesce($4::bigint, watch_attempt)
  WHERE name = $1
    AND ($4::bigint IS NULL OR watch_attempt < $4::bigint)
    AND ($5::uuid IS NULL OR incarnation = $5::uuid)
    AND ($6::bigint IS NULL OR generation = $6::bigint)
  RETURNING name
)
SELECT target.state, target.current, (SELECT count(*) FROM opened) = 0 AS superseded FROM target
