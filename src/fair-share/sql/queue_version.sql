-- fair-share/queue_version: a queue's resourceVersion (its latest watch event), the row locked until the transaction ends (an
-- update that names the version it read is refused if another came first). $1 namespace, $2 name.
SELECT watch_rv FROM queues WHERE namespace = $1 AND name = $2 FOR UPDATE
