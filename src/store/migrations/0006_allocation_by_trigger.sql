-- 0006_allocation_by_trigger: what a node holds (nodes.allocated_*) has one writer, these
-- triggers on assignments, in the same statement as every change that makes an assignment
-- active or ends one. Placement, reports, confirm timeouts, deaths, registrations and cancels no
-- longer add or subtract by hand, and nothing recounts: a recount inside an INSERT ... ON
-- CONFLICT read a snapshot from before it waited on the node's row lock, and under-counted a
-- placement committed meanwhile. Statement-level triggers with transition tables: a round of a
-- thousand placements is one UPDATE of the nodes it touched, not a thousand. The CHECK
-- constraint allocation_within_capacity still refuses an overcommit, now from inside them.

CREATE FUNCTION fencer_allocation_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis + d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes + d.memory
        FROM (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory
              FROM inserted WHERE state IN ('Assigned', 'Running') GROUP BY node) d
        WHERE n.name = d.node;
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis + d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes + d.memory
        FROM (SELECT a.node,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN a.cpu_millis ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN b.cpu_millis ELSE 0 END) AS cpu,
                     sum(CASE WHEN a.state IN ('Assigned', 'Running') THEN a.memory_bytes ELSE 0 END
                       - CASE WHEN b.state IN ('Assigned', 'Running') THEN b.memory_bytes ELSE 0 END) AS memory
              FROM updated a JOIN previous b USING (id)
              GROUP BY a.node) d
        WHERE n.name = d.node AND (d.cpu <> 0 OR d.memory <> 0);
    ELSE
        UPDATE nodes n SET allocated_cpu_millis = n.allocated_cpu_millis - d.cpu,
                           allocated_memory_bytes = n.allocated_memory_bytes - d.memory
        FROM (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory
              FROM removed WHERE state IN ('Assigned', 'Running') GROUP BY node) d
        WHERE n.name = d.node;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER assignments_allocate AFTER INSERT ON assignments
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION fencer_allocation_delta();
CREATE TRIGGER assignments_reallocate AFTER UPDATE ON assignments
    REFERENCING OLD TABLE AS previous NEW TABLE AS updated FOR EACH STATEMENT EXECUTE FUNCTION fencer_allocation_delta();
CREATE TRIGGER assignments_deallocate AFTER DELETE ON assignments
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION fencer_allocation_delta();

-- From here the counter is exact: start it from the truth.
UPDATE nodes n SET allocated_cpu_millis = coalesce(h.cpu, 0), allocated_memory_bytes = coalesce(h.memory, 0)
FROM nodes m LEFT JOIN (SELECT node, sum(cpu_millis) AS cpu, sum(memory_bytes) AS memory
                        FROM assignments WHERE state IN ('Assigned', 'Running') GROUP BY node) h ON h.node = m.name
WHERE n.name = m.name;
