-- jobs/lock: lock jobs before touching their assignments and nodes. Every transaction locks
-- in the order job, assignment, node, which keeps deadlocks away. $1 uuid[] job uids.
SELECT uid, phase, assignment_id FROM jobs WHERE uid = ANY($1::uuid[]) ORDER BY uid FOR UPDATE
