// Rows to the resources users see (Kubernetes shapes, see DESIGN.md "Contracts").
import type { Condition, Job, JobStatus, NodeResource, ObjectMeta, Workflow, WorkflowStatus } from '../domain/resources.js';
import { API_VERSION } from '../domain/resources.js';
import type { JobRow, NodeRow, WorkflowRow } from '../store/rows.js';
import { stages } from '../scheduling/dag.js';
import { formatCpu, formatMemory } from '../domain/quantity.js';

const CONDITION_TYPES: Record<string, { type: string; status: Condition['status'] }> = {
  Unschedulable: { type: 'Scheduled', status: 'False' },
  NodeDied: { type: 'Requeued', status: 'True' },
  NodeLost: { type: 'Requeued', status: 'True' },
  NotConfirmed: { type: 'Requeued', status: 'True' },
  Completed: { type: 'Complete', status: 'True' },
  Error: { type: 'Failed', status: 'True' },
  AttemptsExhausted: { type: 'Failed', status: 'True' },
  NotReported: { type: 'Requeued', status: 'True' },
  Replayed: { type: 'Requeued', status: 'True' },
  Retried: { type: 'Requeued', status: 'True' },
  WaitingForNeeds: { type: 'Ready', status: 'False' },
  NeedFailed: { type: 'Skipped', status: 'True' },
  NeedDead: { type: 'Skipped', status: 'True' },
  NeedSkipped: { type: 'Skipped', status: 'True' },
  NeedCancelled: { type: 'Skipped', status: 'True' },
  NeedMissing: { type: 'Skipped', status: 'True' },
  Cancelled: { type: 'Cancelled', status: 'True' },
};

export function presentJob(row: JobRow): Job {
  const conditions: Condition[] = [];
  if (row.waiting) {
    const message = `waiting for ${row.needs.join(', ')} to succeed`;
    conditions.push({ type: 'Ready', status: 'False', reason: 'WaitingForNeeds', message, lastTransitionTime: row.updated_at.toISOString() });
  } else if (row.phase === 'Pending' && row.due_at.getTime() > Date.now()) {
    conditions.push({ type: 'Ready', status: 'False', reason: 'NotDue', message: `due at ${row.due_at.toISOString()}`, lastTransitionTime: row.updated_at.toISOString() });
  }
  if (row.reason) {
    // A dead letter keeps its last failure as reason; the condition says what became of the job.
    const kind =
      row.phase === 'Dead' ? { type: 'DeadLetter', status: 'True' as const } : (CONDITION_TYPES[row.reason] ?? { type: row.reason, status: 'True' as const });
    conditions.push({ ...kind, reason: row.reason, message: row.message ?? '', lastTransitionTime: row.updated_at.toISOString() });
  }
  const status: JobStatus = { phase: row.phase, attempt: row.attempt, conditions };
  if (row.node) status.node = row.node;
  if (row.assignment_id) status.assignment = row.assignment_id;
  if (row.epoch !== null) status.epoch = row.epoch;
  if (row.started_at) status.startTime = row.started_at.toISOString();
  if (row.finished_at) status.completionTime = row.finished_at.toISOString();
  if (row.phase === 'Pending') status.dueTime = row.due_at.toISOString();
  return {
    apiVersion: API_VERSION,
    kind: 'Job',
    metadata: metadataOf(row),
    spec: row.spec,
    status,
  };
}

function metadataOf(row: JobRow | WorkflowRow): ObjectMeta {
  return {
    name: row.name,
    namespace: row.namespace,
    labels: row.labels,
    uid: row.uid,
    creationTimestamp: row.created_at.toISOString(),
    resourceVersion: String(row.resource_version),
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

/** A workflow with each of its jobs' phases and stages (Kahn's, from its spec). */
export function presentWorkflow(row: WorkflowRow, jobs: JobRow[]): Workflow {
  const stageOf = stages(row.spec.jobs.map((j) => ({ name: j.name, needs: j.needs ?? [], durationMs: 0 })));
  const byName = new Map(jobs.map((j) => [j.labels['fencer.dev/workflow-job'] ?? j.name, j]));
  const conditions: Condition[] = [];
  if (row.reason) {
    const type = row.phase === 'Running' ? 'Progressing' : row.phase === 'Succeeded' ? 'Complete' : row.phase;
    conditions.push({ type, status: 'True', reason: row.reason, message: row.message ?? '', lastTransitionTime: row.updated_at.toISOString() });
  }
  return {
    apiVersion: API_VERSION,
    kind: 'Workflow',
    metadata: metadataOf(row),
    spec: row.spec,
    status: {
      phase: row.phase,
      jobs: row.spec.jobs.map((j) => {
        const job = byName.get(j.name);
        const entry: WorkflowStatus['jobs'][number] = {
          name: j.name,
          job: job?.name ?? `${row.name}-${j.name}`,
          phase: job?.phase ?? 'Pending',
          stage: stageOf.get(j.name) ?? 0,
        };
        const reason = job?.waiting ? 'WaitingForNeeds' : job?.reason;
        if (reason) entry.reason = reason;
        return entry;
      }),
      startTime: row.created_at.toISOString(),
      ...(row.finished_at ? { completionTime: row.finished_at.toISOString() } : {}),
      conditions,
    },
  };
}
