-- jobs/pending_count: how many jobs wait to be placed, cluster-wide (the backlog a submission is
-- admitted against; index jobs_pending_due). No parameters.
SELECT count(*)::int AS n FROM jobs WHERE phase = 'Pending'
