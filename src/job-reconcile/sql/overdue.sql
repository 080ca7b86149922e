-- job-reconcile/overdue: Running assignments whose node has reported nothing about them for longer
-- than it can still be running them: a run begins within the confirm timeout of its claim
-- (started_at) and lasts duration_ms; $2 ms is the slack beyond that (the caller's: the confirm
-- timeout and the silence timeout). Their node is alive (else node-health ends them) but its end
-- report is late or was lost: the node is asked again. $1 limit.
SELECT id, job_uid, node FROM assignments
WHERE state = 'Running' AND started_at + (duration_ms + $2::bigint) * interval '1 millisecond' < now()
ORDER BY started_at LIMIT $1
