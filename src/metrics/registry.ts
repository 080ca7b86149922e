// One prom-client registry per replica process, served at /metrics.
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'fencer_process_' });

export const reconciles = new Counter({
  name: 'fencer_reconcile_total',
  help: 'Controller passes by controller and result (done, requeue, lease_lost, error).',
  labelNames: ['controller', 'result'] as const,
  registers: [registry],
});

export const reconcileSeconds = new Histogram({
  name: 'fencer_reconcile_duration_seconds',
  help: 'How long one controller pass took.',
  labelNames: ['controller'] as const,
  buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

export const jobsPlaced = new Counter({
  name: 'fencer_jobs_placed_total',
  help: 'Jobs placed on a node by this replica while it led.',
  registers: [registry],
});

// Summaries, not histograms: the packing benchmark reads exact p50 and p99 of these from the
// leader, and sub-millisecond rounds would all fall in one histogram bucket.
export const placementDecideSeconds = new Summary({
  name: 'fencer_placement_decide_seconds',
  help: 'One placement round\'s decision alone: pending jobs and nodes in, placements out (no I/O).',
  percentiles: [0.5, 0.99],
  registers: [registry],
});

export const placementRoundSeconds = new Summary({
  name: 'fencer_placement_round_seconds',
  help: 'One placement round that had pending jobs: read, decide and the fenced commit.',
  percentiles: [0.5, 0.99],
  registers: [registry],
});

export const nodesDeclaredDead = new Counter({
  name: 'fencer_nodes_declared_dead_total',
  help: 'Nodes this replica declared dead while it led.',
  registers: [registry],
});

export const fencedRejections = new Counter({
  name: 'fencer_fenced_rejections_total',
  help: 'Fenced transactions that found the lease epoch was no longer ours, or died with our session.',
  registers: [registry],
});

export const leaderGauge = new Gauge({
  name: 'fencer_leader',
  help: '1 while this replica leads, else 0.',
  registers: [registry],
});

export const epochGauge = new Gauge({
  name: 'fencer_lease_epoch',
  help: 'The epoch under which this replica last led.',
  registers: [registry],
});

export const cronLatenessSeconds = new Histogram({
  name: 'fencer_cron_lateness_seconds',
  help: 'How late a CronJob occurrence was fired (its Job made): the fire\'s database time minus the scheduled time.',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [registry],
});

export const cronOccurrences = new Counter({
  name: 'fencer_cron_occurrences_total',
  help: 'CronJob occurrences handled by this replica while it led, by outcome (Fired, Skipped) and reason.',
  labelNames: ['outcome', 'reason'] as const,
  registers: [registry],
});
