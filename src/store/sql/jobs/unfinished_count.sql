-- jobs/unfinished_count: jobs that can still change (not Succeeded, Failed, Cancelled, Skipped or
-- Dead) and workflows still running: what a benchmark or a test waits for to reach zero. No parameters.
SELECT (SELECT count(*) FROM jobs WHERE phase NOT IN ('Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead'))::int AS jobs,
       (SELECT count(*) FROM workflows WHERE phase = 'Running')::int AS workflows
