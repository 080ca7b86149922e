-- placement/nodes: nodes that can take work: Ready, with an open watch stream, and a heartbeat
-- recorded within $1 ms (a node cut off is not dead yet, but it is no home for a job).
SELECT name, cpu_millis, memory_bytes, allocated_cpu_millis, allocated_memory_bytes, labels, images
FROM nodes JOIN node_heartbeats h USING (name)
WHERE state = 'Ready' AND watch_session IS NOT NULL AND disconnected_at IS NULL
  AND h.at > now() - $1::bigint * interval '1 millisecond'
ORDER BY name
