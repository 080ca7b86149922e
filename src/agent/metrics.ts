// What an agent process serves at /metrics (`fencer agent --metrics-port`): its own registry, one
// series per node it runs (a benchmark runs several nodes in one process). docs/metrics.md lists them.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LATENCY_BUCKETS } from '../metrics/buckets.js';

export const agentRegistry = new Registry();
collectDefaultMetrics({ register: agentRegistry, prefix: 'fencer_agent_process_' });
// As in the replicas' registry: gauges named *_total fail promtool.
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
  agentRegistry.removeSingleMetric(`fencer_agent_process_${name}`);

export const agentJobsRunning = new Gauge({
  name: 'fencer_agent_jobs_running',
  help: 'Jobs this node is running now (holding their CPU and memory).',
  labelNames: ['node'] as const,
  registers: [agentRegistry],
});

export const agentRuns = new Counter({
  name: 'fencer_agent_runs_total',
  help: 'Runs this node ended, by reason (completed, failed, stale, self-fence, shutdown, withdrawn).',
  labelNames: ['node', 'reason'] as const,
  registers: [agentRegistry],
});

export const agentSelfFences = new Counter({
  name: 'fencer_agent_self_fences_total',
  help: 'Times this node found itself cut off from the control plane and stopped every job it ran.',
  labelNames: ['node'] as const,
  registers: [agentRegistry],
});

export const agentRejected = new Counter({
  name: 'fencer_agent_assignments_rejected_total',
  help: 'Assignments this node did not run, by reason: stale-epoch (from an older leader), claim-refused, claim-late, unclaimed.',
  labelNames: ['node', 'reason'] as const,
  registers: [agentRegistry],
});

export const agentReportRetries = new Counter({
  name: 'fencer_agent_report_retries_total',
  help: 'Batches of reports this node sent again because no replica answered.',
  labelNames: ['node'] as const,
  registers: [agentRegistry],
});

export const agentHeartbeatSeconds = new Histogram({
  name: 'fencer_agent_heartbeat_seconds',
  help: 'A heartbeat, from its sending to the first answer that recorded it (whichever replica gave it).',
  buckets: LATENCY_BUCKETS,
  registers: [agentRegistry],
});
