// Rows to the resources users see (Kubernetes shapes, see docs/architecture.md, "Contracts").
import type {
  ClusterEvent,
  Condition,
  CronJob,
  CronJobStatus,
  Job,
  JobEvent,
  JobStatus,
  NodeResource,
  ObjectMeta,
  Queue,
  ResourceQuota,
  Workflow,
  WorkflowStatus,
} from '../domain/resources.js';
import { API_VERSION } from '../domain/resources.js';
import type { NamespaceResource, NamespaceStatus } from '../domain/namespace.js';
import type { CronJobListRow, JobRow, NodeRow, WorkflowRow } from '../store/rows.js';
import type { JobHistoryRow } from '../store/jobs.js';
import type { ClusterEventRow } from '../store/cluster-events.js';
import type { NamespaceUsage, QueueRow, QuotaRow } from '../fair-share/store.js';
import { stages } from '../workflows/dag.js';
import { formatCpu, formatMemory } from '../domain/quantity.js';

const CONDITION_TYPES: Record<string, { type: string; status: Condition['status'] }> = {
  // Why a pending job is not placed yet (placement writes these), as a pod's PodScheduled False.
  Unschedulable: { type: 'Scheduled', status: 'False' },
  QueueAtLimit: { type: 'Scheduled', status: 'False' },
  QuotaExceeded: { type: 'Scheduled', status: 'False' },
  // No longer written (a job that only waits its turn has no condition, as a pod in the
  // scheduler's queue has none); rows from before keep it until placed.
  WaitingForShare: { type: 'Scheduled', status: 'False' },
  NodeDied: { type: 'Requeued', status: 'True' },
  NodeLost: { type: 'Requeued', status: 'True' },
  NotConfirmed: { type: 'Requeued', status: 'True' },
  Completed: { type: 'Complete', status: 'True' },
  Error: { type: 'Failed', status: 'True' },
  AttemptsExhausted: { type: 'Failed', status: 'True' },
  TooManyDisruptions: { type: 'Failed', status: 'True' },
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
  Replaced: { type: 'Cancelled', status: 'True' },
};

export function presentJob(row: JobRow): Job {
  const conditions: Condition[] = [];
  if (row.waiting) {
    const message = `waiting for ${row.needs.join(', ')} to succeed`;
    conditions.push({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForNeeds',
      message,
      lastTransitionTime: row.updated_at.toISOString(),
    });
  } else if (row.phase === 'Pending' && row.due_at.getTime() > Date.now()) {
    conditions.push({
      type: 'Ready',
      status: 'False',
      reason: 'NotDue',
      message: `due at ${row.due_at.toISOString()}`,
      lastTransitionTime: row.updated_at.toISOString(),
    });
  }
  if (row.reason) {
    // A dead letter keeps its last failure as reason; the condition says what became of the job.
    const kind =
      row.phase === 'Dead'
        ? { type: 'DeadLetter', status: 'True' as const }
        : (CONDITION_TYPES[row.reason] ?? { type: row.reason, status: 'True' as const });
    conditions.push({
      ...kind,
      reason: row.reason,
      message: row.message ?? '',
      lastTransitionTime: row.updated_at.toISOString(),
    });
  }
  const status: JobStatus = { phase: row.phase, attempt: row.attempt, conditions };
  if (row.disruptions > 0) status.disruptions = row.disruptions;
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

type StoredObject = Pick<
  JobRow,
  'name' | 'namespace' | 'labels' | 'uid' | 'created_at' | 'resource_version' | 'watch_rv'
> & { annotations?: Record<string, string> };

function metadataOf(row: StoredObject): ObjectMeta {
  return {
    name: row.name,
    namespace: row.namespace,
    labels: row.labels,
    ...(row.annotations && Object.keys(row.annotations).length > 0 ? { annotations: row.annotations } : {}),
    uid: row.uid,
    creationTimestamp: row.created_at.toISOString(),
    // The latest watch event's id: where a client that saw this object resumes a watch.
    resourceVersion: String(row.watch_rv ?? row.resource_version),
  };
}

export function presentNode(row: NodeRow): NodeResource {
  const conditions: Condition[] = [];
  if (row.state === 'Dead' && row.dead_at) {
    conditions.push({
      type: 'Ready',
      status: 'False',
      reason: 'NodeDied',
      message: row.dead_reason ?? '',
      lastTransitionTime: row.dead_at.toISOString(),
    });
  }
  return {
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: {
      name: row.name,
      labels: row.labels,
      creationTimestamp: row.registered_at.toISOString(),
      resourceVersion: String(row.watch_rv ?? 0),
    },
    spec: { capacity: { cpu: formatCpu(row.cpu_millis), memory: formatMemory(row.memory_bytes), jobs: row.max_jobs } },
    status: {
      phase: row.state,
      allocated: {
        cpu: formatCpu(row.allocated_cpu_millis),
        memory: formatMemory(row.allocated_memory_bytes),
        jobs: row.allocated_jobs,
        unclaimed: row.unclaimed_jobs,
      },
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
    conditions.push({
      type,
      status: 'True',
      reason: row.reason,
      message: row.message ?? '',
      lastTransitionTime: row.updated_at.toISOString(),
    });
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

/**
 * A queue with what it holds and what waits in it. AtLimit is True while the queue may place
 * nothing more (its jobs then wait with the reason QueueAtLimit). fencer keeps no history of a
 * queue's use, so the condition's time is when it was observed.
 */
export function presentQueue(row: QueueRow, now = new Date()): Queue {
  return {
    apiVersion: API_VERSION,
    kind: 'Queue',
    metadata: metadataOf(row),
    // A namespace's implicit `default` queue is stored with an empty spec: shown with its
    // defaults, as an applied queue's spec is.
    spec: { weight: row.weight, lanes: row.strict_lanes ? 'strict' : 'weighted', ...row.spec },
    status: {
      running: row.running,
      allocated: { cpu: formatCpu(row.allocated_cpu_millis), memory: formatMemory(row.allocated_memory_bytes) },
      pending: row.pending,
      ...(row.oldest_pending_at ? { oldestPendingTime: row.oldest_pending_at.toISOString() } : {}),
      conditions: [{ type: 'AtLimit', ...queueLimit(row), lastTransitionTime: now.toISOString() }],
    },
  };
}

function queueLimit(row: QueueRow): Pick<Condition, 'status' | 'reason' | 'message'> {
  if (row.concurrency_limit !== null && row.running >= row.concurrency_limit) {
    return {
      status: 'True',
      reason: 'ConcurrencyLimit',
      message: `${row.running} jobs placed, spec.concurrencyLimit ${row.concurrency_limit}`,
    };
  }
  const full = fullResources(row, row.cpu_limit_millis, row.memory_limit_bytes);
  if (full)
    return { status: 'True', reason: 'ResourceLimit', message: `its placed jobs hold ${full} (spec.resourceLimit)` };
  const limited = row.concurrency_limit !== null || row.cpu_limit_millis !== null || row.memory_limit_bytes !== null;
  return limited
    ? { status: 'False', reason: 'WithinLimits', message: 'the queue may place more jobs' }
    : { status: 'False', reason: 'NoLimits', message: 'the queue has no concurrency or resource limit' };
}

/** "4 of 4 CPU" when what is held reached a limit, else null. */
function fullResources(
  held: { allocated_cpu_millis: number; allocated_memory_bytes: number },
  cpuLimit: number | null,
  memoryLimit: number | null,
): string | null {
  if (cpuLimit !== null && held.allocated_cpu_millis >= cpuLimit)
    return `${formatCpu(held.allocated_cpu_millis)} of ${formatCpu(cpuLimit)} CPU`;
  if (memoryLimit !== null && held.allocated_memory_bytes >= memoryLimit) {
    return `${formatMemory(held.allocated_memory_bytes)} of ${formatMemory(memoryLimit)} memory`;
  }
  return null;
}

/** A namespace's quota with what the namespace uses against it; AtLimit as for a queue. */
export function presentResourceQuota(row: QuotaRow, now = new Date()): ResourceQuota {
  return {
    apiVersion: API_VERSION,
    kind: 'ResourceQuota',
    metadata: metadataOf(row),
    spec: row.spec,
    status: {
      used: {
        pendingJobs: row.pending,
        cpu: formatCpu(row.allocated_cpu_millis),
        memory: formatMemory(row.allocated_memory_bytes),
      },
      conditions: [{ type: 'AtLimit', ...quotaLimit(row), lastTransitionTime: now.toISOString() }],
    },
  };
}

function quotaLimit(row: QuotaRow): Pick<Condition, 'status' | 'reason' | 'message'> {
  if (row.pending_jobs !== null && row.pending >= row.pending_jobs) {
    return {
      status: 'True',
      reason: 'PendingJobs',
      message: `${row.pending} jobs wait to be placed, spec.hard.pendingJobs ${row.pending_jobs}: submits are refused (429)`,
    };
  }
  const full = fullResources(row, row.cpu_limit_millis, row.memory_limit_bytes);
  if (full)
    return { status: 'True', reason: 'ResourceLimit', message: `the namespace's placed jobs hold ${full} (spec.hard)` };
  return { status: 'False', reason: 'WithinLimits', message: 'the namespace may take and place more jobs' };
}

/** GET /api/v1/namespaces/NS: what the namespace uses, against its quota and per queue. */
export function presentNamespace(
  name: string,
  usage: NamespaceUsage,
  quota: QuotaRow | undefined,
  queues: QueueRow[],
): NamespaceResource {
  const status: NamespaceStatus = {
    pendingJobs: usage.pending,
    runningJobs: usage.running,
    allocated: { cpu: formatCpu(usage.allocated_cpu_millis), memory: formatMemory(usage.allocated_memory_bytes) },
    queues: queues.map((q) => ({
      name: q.name,
      weight: q.weight,
      running: q.running,
      ...(q.concurrency_limit !== null ? { concurrencyLimit: q.concurrency_limit } : {}),
      allocated: { cpu: formatCpu(q.allocated_cpu_millis), memory: formatMemory(q.allocated_memory_bytes) },
      ...(q.cpu_limit_millis !== null || q.memory_limit_bytes !== null
        ? { resourceLimit: limits(q.cpu_limit_millis, q.memory_limit_bytes) }
        : {}),
      pending: q.pending,
      ...(q.oldest_pending_at ? { oldestPendingTime: q.oldest_pending_at.toISOString() } : {}),
    })),
  };
  if (usage.oldest_pending_name && usage.oldest_pending_at) {
    status.oldestPending = { name: usage.oldest_pending_name, since: usage.oldest_pending_at.toISOString() };
  }
  if (quota) {
    status.quota = {
      name: quota.name,
      hard: {
        ...(quota.pending_jobs !== null ? { pendingJobs: quota.pending_jobs } : {}),
        ...limits(quota.cpu_limit_millis, quota.memory_limit_bytes),
      },
      used: {
        pendingJobs: quota.pending,
        cpu: formatCpu(quota.allocated_cpu_millis),
        memory: formatMemory(quota.allocated_memory_bytes),
      },
      ...(quota.rate_per_second !== null && quota.rate_burst !== null
        ? { placementRate: { perSecond: quota.rate_per_second, burst: quota.rate_burst } }
        : {}),
    };
  }
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Active', ...status } };
}

function limits(cpuMillis: number | null, memoryBytes: number | null): { cpu?: string; memory?: string } {
  return {
    ...(cpuMillis !== null ? { cpu: formatCpu(cpuMillis) } : {}),
    ...(memoryBytes !== null ? { memory: formatMemory(memoryBytes) } : {}),
  };
}

export function presentCronJob(row: CronJobListRow): CronJob {
  const lastSuccess = [row.last_successful_time, row.newest_success]
    .filter((d): d is Date => d !== null)
    .sort((a, b) => b.getTime() - a.getTime())[0];
  const status: CronJobStatus = {
    activeCount: row.active.length,
    active: row.active.map((j) => ({
      apiVersion: API_VERSION,
      kind: 'Job',
      namespace: row.namespace,
      name: j.name,
      uid: j.uid,
    })),
    conditions: [
      row.blocked_reason
        ? {
            type: 'Firing',
            status: 'False',
            reason: row.blocked_reason,
            message: row.blocked_message ?? '',
            lastTransitionTime: row.updated_at.toISOString(),
          }
        : {
            type: 'Firing',
            status: 'True',
            reason: row.suspend ? 'Suspended' : 'OnSchedule',
            message: row.suspend ? 'occurrences are recorded Skipped (spec.suspend)' : 'occurrences fire when due',
            lastTransitionTime: row.updated_at.toISOString(),
          },
    ],
  };
  if (row.last_schedule_time) status.lastScheduleTime = row.last_schedule_time.toISOString();
  if (lastSuccess) status.lastSuccessfulTime = lastSuccess.toISOString();
  if (row.next_fire_at) status.nextScheduleTime = row.next_fire_at.toISOString();
  return { apiVersion: API_VERSION, kind: 'CronJob', metadata: metadataOf(row), spec: row.spec, status };
}

const WARNING_STATES = new Set(['Failed', 'Lost', 'Unconfirmed', 'Dead']);

/** A history row as an event: what changed, from what, where, under which epoch, by whom. */
export function presentJobEvent(row: JobHistoryRow): JobEvent {
  const what = row.entity === 'job' ? 'job' : `assignment/${row.assignment}`;
  const change = row.from_state ? `${row.from_state} → ${row.to_state}` : row.to_state;
  const where = [
    row.node ? `node ${row.node}` : '',
    row.epoch !== null ? `epoch ${row.epoch}` : '',
    row.actor ? `asked by ${row.actor}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return {
    time: row.at.toISOString(),
    type: WARNING_STATES.has(row.to_state) ? 'Warning' : 'Normal',
    reason: row.reason ?? row.to_state,
    object: what,
    message: `${what} ${change}${where ? ` (${where})` : ''}`,
    epoch: row.epoch,
    node: row.node,
    replica: row.replica,
    actor: row.actor,
  };
}

export function presentClusterEvent(row: ClusterEventRow): ClusterEvent {
  return {
    time: row.at.toISOString(),
    type: row.type,
    reason: row.reason,
    object: row.object,
    message: row.message,
    epoch: row.epoch,
    replica: row.replica,
  };
}
