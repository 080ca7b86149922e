-- 0021_job_slots: what a node has in flight is bounded, so a burst costs each job one assignment.
-- - max_jobs: the most runs a node holds at once (Assigned or Running), its own option like
--   kubelet's max pods; allocated_jobs counts them, and the CHECK refuses one more, as
--   allocation_within_capacity refuses an overcommit.
-- - unclaimed_jobs: its assignments not yet claimed (Assigned). Placement gives a node new work
--   only while this is under the control plane's bound (FENCER_MAX_UNCLAIMED_PER_NODE), so a node
--   is handed work as fast as it claims it, never a queue it cannot claim in time.
-- Both are kept by the allocation triggers of 0006, in the statement that changes the
-- assignments, like the CPU and memory they hold.
-- - confirm_by is set when a replica first sends the assignment to its node (its watch stream),
--   not at placement: the confirm deadline measures the node, never how long the control plane
--   took to tell it. NULL until then.
-- Both tables first, in one go: a replica still on the old code locks assignments, then nodes
-- (a report's trigger), and taking nodes first here could deadlock with it.
LOCK TABLE assignments, nodes IN ACCESS EXCLUSIVE MODE;
ALTER TABLE nodes
  ADD COLUMN max_jobs int NOT NULL DEFAULT 110 CHECK (max_jobs > 0),
  ADD COLUMN allocated_jobs int NOT NULL DEFAULT 0,
  ADD COLUMN unclaimed_jobs int NOT NULL DEFAULT 0;
ALTER TABLE assignments ALTER COLUMN confirm_by DROP NOT NULL;

CREATE OR REPLACE FUNCTION fencer_allocation_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis + d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes + d.memory,
                           allocated_jobs = n.allocated_jobs + d.jobs,
                           unclaimed_jobs = n.unclaimed_jobs + d.unclaimed
        FROM (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory, count(*) AS jobs,
                     count(*) FILTER (WHERE state = 'Assigned') AS unclaimed
              FROM inserted WHERE state IN ('Assigned', 'Running') GROUP BY node) d
        WHERE n.name = d.node;
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis + d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes + d.memory,
                           allocated_jobs = n.allocated_jobs + d.jobs,
                           unclaimed_jobs = n.unclaimed_jobs + d.unclaimed
        FROM (SELECT a.node,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN a.cpu_millis ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN b.cpu_millis ELSE 0 END) AS cpu,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN a.memory_bytes ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN b.memory_bytes ELSE 0 END) AS memory,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN 1 ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN 1 ELSE 0 END) AS jobs,
                     sum(CASE WHEN a.state = 'Assigned' THEN 1 ELSE 0 END
                       - CASE WHEN b.state = 'Assigned' THEN 1 ELSE 0 END) AS unclaimed
              FROM updated a JOIN previous b USING (id)
              GROUP BY a.node) d
        WHERE n.name = d.node AND (d.cpu <> 0 OR d.memory <> 0 OR d.jobs <> 0 OR d.unclaimed <> 0);
    ELSE
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis - d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes - d.memory,
                           allocated_jobs = n.allocated_jobs - d.jobs,
                           unclaimed_jobs = n.unclaimed_jobs - d.unclaimed
        FROM (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory, count(*) AS jobs,
                     count(*) FILTER (WHERE state = 'Assigned') AS unclaimed
              FROM removed WHERE state IN ('Assigned', 'Running') GROUP BY node) d
        WHERE n.name = d.node;
    END IF;
    RETURN NULL;
END
$$;

-- From here the counters are exact: start them from the truth (max_jobs first, so a node that
-- already holds more than the default keeps what it holds and takes nothing new until under it).
UPDATE nodes n SET allocated_jobs = coalesce(h.jobs, 0), unclaimed_jobs = coalesce(h.unclaimed, 0),
                   max_jobs = greatest(n.max_jobs, coalesce(h.jobs, 0))
FROM nodes m LEFT JOIN (SELECT node, count(*) AS jobs, count(*) FILTER (WHERE state = 'Assigned') AS unclaimed
                        FROM assignments WHERE state IN ('Assigned', 'Running') GROUP BY node) h ON h.node = m.name
WHERE n.name = m.name;

ALTER TABLE nodes ADD CONSTRAINT jobs_within_capacity CHECK (
  allocated_jobs BETWEEN 0 AND max_jobs AND unclaimed_jobs BETWEEN 0 AND allocated_jobs
);
