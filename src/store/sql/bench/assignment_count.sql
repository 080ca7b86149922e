-- bench/assignment_count: how many assignments were ever made (every placement adds one). No
-- parameters.
SELECT count(*)::int AS n FROM assignments
