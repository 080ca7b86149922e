-- assignments/active_on_node: what a node should be running now, for its watch stream. $1 node.
SELECT a.id, a.job_uid, j.namespace || '/' || j.name AS job, a.epoch, a.attempt,
       a.cpu_millis, a.memory_bytes, a.duration_ms, a.state
FROM assignments a JOIN jobs j ON j.uid = a.job_uid
WHERE a.node = $1 AND a.state IN ('Assigned', 'Running')
ORDER BY a.created_at, a.id
