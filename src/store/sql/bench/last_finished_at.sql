-- bench/last_finished_at: when the last job to end ended (null while none has). No parameters.
SELECT max(finished_at) AS at FROM jobs
