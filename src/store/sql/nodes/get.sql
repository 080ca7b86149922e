-- nodes/get: one node. $1 name.
SELECT * FROM nodes WHERE name = $1
