-- bench/throughput_lease: who holds the lease at which epoch; the epoch goes up by one at every
-- acquisition, so its change over a run counts the leader changes. No parameters.
SELECT holder, epoch FROM lease WHERE id = 1
