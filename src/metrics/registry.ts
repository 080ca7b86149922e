// One prom-client registry per replica process, served at /metrics. docs/metrics.md lists every
// metric; names and units follow Prometheus' conventions (promtool check metrics passes).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LATENCY_BUCKETS } from './buckets.js';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'fencer_process_' });
// prom-client's default gauges that end in _total (a counter's suffix) fail promtool; the same
// counts are there without the suffix.
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
  registry.removeSingleMetric(`fencer_process_${name}`);

export const reconciles = new Counter({
  name: 'fencer_reconcile_total',
  help: 'Controller passes by controller and result (done, requeue, lease_lost, error).',
  labelNames: ['controller', 'result'] as const,
  registers: [registry],
});

export const reconcileSeconds = new Histogram({
  name: 'fencer_reconcile_duration_seconds',
  help: 'How long one controller pass took, from its start on the decision thread.',
  labelNames: ['controller'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const decisionWaitSeconds = new Histogram({
  name: 'fencer_decision_wait_seconds',
  help: "How long a controller's pass waited for another's to end (one decision at a time per replica).",
  labelNames: ['controller'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const jobsPlaced = new Counter({
  name: 'fencer_jobs_placed_total',
  help: 'Jobs placed on a node by this replica while it led.',
  registers: [registry],
});

export const placementDecideSeconds = new Histogram({
  name: 'fencer_placement_decide_seconds',
  help: "One placement round's decision alone: pending jobs and nodes in, placements out (no I/O).",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const placementRoundSeconds = new Histogram({
  name: 'fencer_placement_round_seconds',
  help: 'One placement round that had pending jobs: read, decide and the fenced commit.',
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const fencedCommitSeconds = new Histogram({
  name: 'fencer_fenced_commit_seconds',
  help: "A leader's fenced transaction that committed, from BEGIN to COMMIT (the epoch check and a decision's writes).",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const jobPlacementWaitSeconds = new Histogram({
  name: 'fencer_job_placement_wait_seconds',
  help: "A job's wait from its submit (or its due time, if later) to its placement, by the database's clock; each attempt.",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const jobStartSeconds = new Histogram({
  name: 'fencer_job_start_seconds',
  help: "From a job's placement to its node's start report applied, by the database's clock.",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const jobLatenessSeconds = new Histogram({
  name: 'fencer_job_lateness_seconds',
  help: "From the time a job was due to its start report applied, by the database's clock (an attempt after a retry: from its backoff's end).",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const reportApplySeconds = new Histogram({
  name: 'fencer_report_apply_seconds',
  help: "Applying one batch of a node's reports (started, finished, given back) in the database.",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const leaderChanges = new Counter({
  name: 'fencer_leader_changes_total',
  help: 'Times this replica became the leader (a new epoch); summed over the replicas, the changes of leader.',
  registers: [registry],
});

export const takeoverSeconds = new Histogram({
  name: 'fencer_leader_takeover_seconds',
  help: "As the new leader saw it: from the old leader's last sign of life (its last lease renewal, or its step-down) to the new epoch, by the database's clock.",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const leaseRenewals = new Counter({
  name: 'fencer_lease_renewals_total',
  help: 'Lease renewals by this replica while it led, by result: renewed, lost (the lease was no longer ours) or failed (no answer in time, or an error).',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const httpRequests = new Counter({
  name: 'fencer_http_requests_total',
  help: 'HTTP requests answered, by method, route (the pattern, not the path), status code and whether it was a dry run (true: nothing was written).',
  labelNames: ['method', 'route', 'code', 'dry_run'] as const,
  registers: [registry],
});

export const httpRequestSeconds = new Histogram({
  name: 'fencer_http_request_duration_seconds',
  help: 'How long an HTTP request took to answer, by method and route (streams: until their headers).',
  labelNames: ['method', 'route'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const httpShed = new Counter({
  name: 'fencer_http_shed_total',
  help: 'Requests answered 503 because no database connection came free in time (the replica is overloaded; the client tries another).',
  registers: [registry],
});

export const nodesDeclaredDead = new Counter({
  name: 'fencer_nodes_declared_dead_total',
  help: 'Nodes this replica declared dead while it led.',
  registers: [registry],
});

export const fencedRejections = new Counter({
  name: 'fencer_fenced_rejections_total',
  help: 'Fenced transactions rejected, by cause: epoch (the lease had moved to a newer epoch) or session (our session died, e.g. ended while frozen).',
  labelNames: ['cause'] as const,
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
  help: "How late a CronJob occurrence was fired (its Job made): the fire's database time minus the scheduled time.",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [registry],
});

export const cronOccurrences = new Counter({
  name: 'fencer_cron_occurrences_total',
  help: 'CronJob occurrences handled by this replica while it led, by outcome (Fired, Skipped) and reason.',
  labelNames: ['outcome', 'reason'] as const,
  registers: [registry],
});
