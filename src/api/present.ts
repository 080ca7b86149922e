// Rows to the resources users see (Kubernetes shapes, see DESIGN.md "Contracts").
import type { Condition, Job, JobStatus, NodeResource } from '../domain/resources.js';
import { API_VERSION } from '../domain/resources.js';
import type { JobRow, NodeRow } from '../store/rows.js';
import { formatCpu, formatMemory } from '../domain/quantity.js';

const CONDITION_TYPES: Record<string, { type: string; status: Condition['status'] }> = {
  Unschedulable: { type: 'Scheduled', status: 'False' },
  NodeDied: { type: 'Requeued', status: 'True' },
  NodeLost: { type: 'Requeued', status: 'True' },
  NotConfirmed: { type: 'Requeued', status: 'True' },
  Completed: { type: 'Complete', status: 'True' },
  Error: { type: 'Failed', status: 'True' },
  AttemptsExhausted: { type: 'Failed', status: 'True' },
  Cancelled: { type: 'Cancelled', status: 'True' },
};

export function presentJob(row: JobRow): Job {
  const conditions: Condition[] = [];
  if (row.reason) {
    const kind = CONDITION_TYPES[row.reason] ?? { type: row.reason, status: 'True' as const };
    conditions.push({ ...kind, reason: row.reason, message: row.message ?? '', lastTransitionTime: row.updated_at.toISOString() });
  }
  const status: JobStatus = { phase: row.phase, attempt: row.attempt, conditions };
  if (row.node) status.node = row.node;
  if (row.assignment_id) status.assignment = row.assignment_id;
  if (row.epoch !== null) status.epoch = row.epoch;
  if (row.started_at) status.startTime = row.started_at.toISOString();
  if (row.finished_at) status.completionTime = row.finished_at.toISOString();
  return {
    apiVersion: API_VERSION,
    kind: 'Job',
    metadata: {
      name: row.name,
      namespace: row.namespace,
      labels: row.labels,
      uid: row.uid,
      creationTimestamp: row.created_at.toISOString(),
      resourceVersion: String(row.resource_version),
    },
    spec: row.spec,
    status,
  };
}

export function presentNode(row: NodeRow): NodeResource {
  const conditions: Condition[] = [];
  if (row.state === 'Dead' && row.dead_at) {
    conditions.push({ type: 'Ready', status: 'False', reason: 'NodeDied', message: row.dead_reason ?? '', lastTransitionTime: row.dead_at.toISOString() });
  }
  return {
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name: row.name, labels: row.labels, creationTimestamp: row.registered_at.toISOString() },
    spec: { capacity: { cpu: formatCpu(row.cpu_millis), memory: formatMemory(row.memory_bytes) } },
    status: {
      phase: row.state,
      allocated: { cpu: formatCpu(row.allocated_cpu_millis), memory: formatMemory(row.allocated_memory_bytes) },
      lastHeartbeatTime: row.last_heartbeat_at.toISOString(),
      connected: row.watch_session !== null && row.disconnected_at === null,
      conditions,
    },
  };
}
