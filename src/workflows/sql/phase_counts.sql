-- workflows/phase_counts: how many workflows are in each phase (a campaign's report). No parameters.
SELECT phase, count(*)::int AS n FROM workflows GROUP BY phase ORDER BY phase
