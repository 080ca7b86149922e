-- nodes/list: every node, with how many active assignments it holds. No parameters.
SELECT n.*, (SELECT count(*) FROM assignments a WHERE a.node = n.name AND a.state IN ('Assigned', 'Running'))::int AS jobs
FROM nodes n ORDER BY n.name
