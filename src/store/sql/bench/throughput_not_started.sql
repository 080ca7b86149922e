-- bench/throughput_not_started: how many jobs whose name starts with $1 (text) have not started
-- yet (Pending or Assigned): the backlog a steady rate left behind.
SELECT count(*)::int AS n FROM jobs WHERE starts_with(name, $1) AND phase IN ('Pending', 'Assigned')
