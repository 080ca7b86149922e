-- history/events_of_job: one job's rows (its own and its assignments') up to a list's cut, by
-- the history_job index: the newest $3, oldest first. $1 job uid, $2 cut, $3 most rows.
SELECT * FROM (
  SELECT id, at, entity, job_uid, job, assignment, node, epoch, from_state, to_state, reason, replica, actor
  FROM history
  WHERE job_uid = $1 AND id <= $2
  ORDER BY id DESC
  LIMIT $3
) newest
ORDER BY id
