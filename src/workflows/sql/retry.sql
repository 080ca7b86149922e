-- workflows/retry: a user retries a closed workflow from its failed jobs: every job that did not
-- succeed is Pending again with fresh attempts (waiting again when it has needs); succeeded jobs
-- are not run again. It is due no earlier than its start time, and no earlier than a cancelled
-- run of it can still be running: a node hears of a cancel through its watch stream, which may
-- be late, but it ends the run by itself at its duration, begun within the confirm timeout of
-- its claim; $2 ms is that slack (as for overdue runs, job-reconcile/overdue.sql).
-- $1 workflow uid (locked, with its jobs), $2 slack ms.
UPDATE jobs j
SET phase = 'Pending', waiting = cardinality(j.needs) > 0, attempt = 1, disruptions = 0,
    due_at = greatest(now(), j.not_before,
                      (SELECT a.started_at + (a.duration_ms + $2::bigint) * interval '1 millisecond'
                       FROM assignments a WHERE a.id = j.assignment_id AND a.state = 'Cancelled' AND a.started_at IS NOT NULL)),
    reason = 'Retried', message = 'the workflow was retried', assignment_id = NULL, node = NULL, epoch = NULL,
    started_at = NULL, finished_at = NULL, updated_at = now(), resource_version = j.resource_version + 1
WHERE j.workflow_uid = $1 AND j.phase IN ('Failed', 'Dead', 'Skipped', 'Cancelled')
RETURNING j.uid
