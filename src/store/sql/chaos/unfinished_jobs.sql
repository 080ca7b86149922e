-- chaos/unfinished_jobs: up to ten jobs not ended, with their assignment's and node's state: what
-- a campaign reports when its jobs do not all end in time. No parameters.
SELECT j.name, j.phase, j.node, j.attempt, j.reason, a.state AS assignment_state, n.state AS node_state,
       n.watch_session IS NOT NULL AS watching
FROM jobs j
LEFT JOIN assignments a ON a.id = j.assignment_id
LEFT JOIN nodes n ON n.name = j.node
WHERE j.phase NOT IN ('Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead')
LIMIT 10
