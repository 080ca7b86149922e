-- chaos/drain_progress: per queue, the jobs not ended by phase and what holds the queue's share
-- now: what a campaign logs while its backlog drains. No parameters.
SELECT coalesce(j.queue, '-') AS queue, j.phase, count(*)::int AS jobs,
       (SELECT count(*) FROM share_holders h WHERE h.queue = j.queue)::int AS holders,
       (SELECT coalesce(sum(h.cpu_millis), 0) FROM share_holders h WHERE h.queue = j.queue)::bigint AS holder_cpu
FROM jobs j
WHERE j.phase NOT IN ('Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead')
GROUP BY j.queue, j.phase
ORDER BY 1, 2
