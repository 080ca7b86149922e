-- chaos/jobs_on_node: the uids of the jobs a node holds now (Assigned or Running there). $1 node.
SELECT uid FROM jobs WHERE node = $1 AND phase IN ('Assigned', 'Running')
