-- bench/throughput_nodes_died: nodes declared dead since $1 (timestamptz), from the cluster's
-- events (NodeDied).
SELECT count(*)::int AS n FROM cluster_events WHERE reason = 'NodeDied' AND at >= $1
