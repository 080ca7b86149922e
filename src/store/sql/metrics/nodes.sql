-- metrics/nodes: every node's state, capacity and what its assignments hold, for /metrics (the
-- leader's, at each scrape). No parameters.
SELECT name, state, cpu_millis, memory_bytes, allocated_cpu_millis, allocated_memory_bytes
FROM nodes
