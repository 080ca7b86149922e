-- checker/history: the whole history table in history order (at, id), for the checker. Times as
-- ms since the Unix epoch with the microseconds in the fraction (a JS Date would drop them, and
-- rows of one millisecond must keep the database's order); bigints as float8, so the result does
-- not depend on a global pg type parser.
SELECT id::float8 AS id,
       (extract(epoch FROM at) * 1000)::float8 AS at,
       entity, job_uid::text AS job_uid, job, assignment::text AS assignment, node,
       epoch::float8 AS epoch, from_state, to_state, reason, replica,
       (extract(epoch FROM due_at) * 1000)::float8 AS due_at, needs, queue
FROM history
ORDER BY history.at, history.id
