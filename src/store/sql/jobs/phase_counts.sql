-- jobs/phase_counts: how many jobs are in each phase (phases with none are absent). No parameters.
SELECT phase, count(*)::int AS n FROM jobs GROUP BY phase ORDER BY phase
