-- nodes/release: give back what ended assignments held. $1 text[] nodes, $2 bigint[] cpu millis,
-- $3 bigint[] memory bytes (one entry per assignment). A Dead node holds nothing already.
UPDATE nodes n
SET allocated_cpu_millis = n.allocated_cpu_millis - r.cpu, allocated_memory_bytes = n.allocated_memory_bytes - r.memory
FROM (
  SELECT node, sum(cpu) AS cpu, sum(memory) AS memory
  FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS e(node, cpu, memory)
  GROUP BY node
) r
WHERE n.name = r.node AND n.state = 'Ready'
