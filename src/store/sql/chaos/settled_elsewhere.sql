-- chaos/settled_elsewhere: how many of the given jobs run on another node than the one given, or
-- have ended. $1 job uids (uuid[]), $2 node.
SELECT count(*)::int AS n FROM jobs
WHERE uid = ANY($1)
  AND ((phase = 'Running' AND node <> $2) OR phase IN ('Succeeded', 'Failed', 'Cancelled', 'Dead'))
