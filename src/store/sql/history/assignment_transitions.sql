-- history/assignment_transitions: every assignment's state changes, in history order (at, id):
-- what proves that no job ever had two active assignments at once. No parameters.
SELECT job, job_uid, assignment, to_state FROM history WHERE entity = 'assignment' ORDER BY at, id
