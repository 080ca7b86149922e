-- assignments/active_job_uids_on_node: the jobs a node holds, to lock before it is declared dead. $1 node.
SELECT job_uid, id FROM assignments WHERE node = $1 AND state IN ('Assigned', 'Running') ORDER BY job_uid
