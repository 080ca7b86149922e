-- jobs/events: what happened to a job, from the history (its own rows and its assignments'):
-- the latest $3, oldest first. $1 namespace, $2 name, $3 most rows.
SELECT * FROM (
  SELECT h.id, h.at, h.entity, h.assignment, h.node, h.epoch, h.from_state, h.to_state, h.reason, h.replica, h.actor
  FROM jobs j JOIN history h ON h.job_uid = j.uid
  WHERE j.namespace = $1 AND j.name = $2
  ORDER BY h.id DESC
  LIMIT $3
) latest
ORDER BY id
