-- bench/packing_sample: one sample of the packing benchmark: CPU and memory allocated on all
-- nodes, jobs pending, jobs ended. No parameters.
SELECT (SELECT coalesce(sum(allocated_cpu_millis), 0)::bigint FROM nodes) AS cpu,
       (SELECT coalesce(sum(allocated_memory_bytes), 0)::bigint FROM nodes) AS memory,
       (SELECT count(*)::int FROM jobs WHERE phase = 'Pending') AS pending,
       (SELECT count(*)::int FROM jobs WHERE phase IN ('Succeeded', 'Failed', 'Cancelled', 'Dead')) AS finished
