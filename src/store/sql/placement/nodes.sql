-- placement/nodes: nodes that can take work: Ready, with an open watch stream. No parameters.
SELECT name, cpu_millis, memory_bytes, allocated_cpu_millis, allocated_memory_bytes, labels
FROM nodes
WHERE state = 'Ready' AND watch_session IS NOT NULL AND disconnected_at IS NULL
ORDER BY name
