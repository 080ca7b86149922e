-- placement/nodes: nodes that can take work: Ready, with an open watch stream, and a heartbeat
-- recorded within $1 ms (a node cut off is not dead yet, but it is no home for a job). free_slots:
-- how many more runs it may be given now: under its max_jobs, and no more unclaimed than $2 (a
-- node is handed work as fast as it claims it).
SELECT name, cpu_millis, memory_bytes, allocated_cpu_millis, allocated_memory_bytes, labels, images,
       least(max_jobs - allocated_jobs, $2::int - unclaimed_jobs) AS free_slots
FROM nodes JOIN node_heartbeats h USING (name)
WHERE state = 'Ready' AND watch_session IS NOT NULL AND disconnected_at IS NULL
  AND h.at > now() - $1::bigint * interval '1 millisecond'
ORDER BY name
