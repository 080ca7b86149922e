// Histogram buckets shared by the replicas' and the agents' registries (no registry here: an
// agent process imports this without creating the replicas' metrics).

/** Latencies from a fraction of a millisecond (a decision) to a minute (a wait behind a backlog). */
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1,
  1.5, 2, 3, 5, 10, 30, 60, 120, 300,
];
