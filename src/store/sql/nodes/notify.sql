-- nodes/notify: tell every replica, on commit, that these nodes' assignments changed. $1 text[] nodes.
SELECT pg_notify('fencer_assignments', node) FROM unnest($1::text[]) AS node GROUP BY node
