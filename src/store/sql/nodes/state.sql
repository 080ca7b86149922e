-- nodes/state: a node's state (Ready or Dead). $1 name. No row: no such node.
SELECT state FROM nodes WHERE name = $1
