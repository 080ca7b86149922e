// The Kubernetes-style shapes fencer speaks on its API, in its CLI and in YAML.
// These are the wire contract: scripts and users rely on them (see docs/architecture.md, "Contracts").

export const API_VERSION = 'fencer.dev/v1';

export type JobPhase = 'Pending' | 'Assigned' | 'Running' | 'Succeeded' | 'Failed' | 'Cancelled' | 'Skipped' | 'Dead';

export const TERMINAL_PHASES: readonly JobPhase[] = ['Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead'];

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  creationTimestamp?: string;
  resourceVersion?: string;
}

/** What the user asked for, as written (quantities stay strings like "500m"). */
export interface JobSpec {
  resources: { cpu: string | number; memory: string | number };
  duration: string;
  nodeSelector?: Record<string, string>;
  /** An image the node must hold (it advertises its images when it registers). */
  image?: string;
  maxAttempts?: number;
  /** Runs its nodes may lose (died, fenced, drained, shut down) before it is Dead; such runs use no attempt. */
  maxDisruptions?: number;
  /** Whether a failure of the job itself is retried (OnFailure, the default) or final (Never). */
  retryPolicy?: RetryPolicy;
  /** Full-jitter exponential backoff between attempts: delay = random(0, min(cap, base·2^attempt)). */
  backoff?: { base?: string; cap?: string };
  /** Due at this time (RFC 3339), or this long after it was accepted; never placed before. */
  startAt?: string;
  startAfter?: string;
  /** Test and demo outcomes: the first failAttempts runs fail with exitCode, after failAfter if given. */
  simulate?: SimulateSpec;
  /** The queue of its namespace it waits in (default "default"). */
  queue?: string;
  /** high, normal (default), low, or a PriorityClass-like integer (>= 1000 high, <= -1000 low). */
  priority?: PriorityName | number;
}

export type PriorityName = 'high' | 'normal' | 'low';

/** What the named priorities stand for, and the thresholds of the lanes. */
export const PRIORITY_VALUES: Readonly<Record<PriorityName, number>> = { high: 1000, normal: 0, low: -1000 };

/** A queue's lanes: 0 high, 1 normal, 2 low (the database derives jobs.lane the same way). */
export type Lane = 0 | 1 | 2;

export function laneOf(priority: number): Lane {
  if (priority >= PRIORITY_VALUES.high) return 0;
  if (priority <= PRIORITY_VALUES.low) return 2;
  return 1;
}

export const DEFAULT_QUEUE = 'default';

export type RetryPolicy = 'OnFailure' | 'Never';

export interface SimulateSpec {
  failAttempts?: number;
  exitCode?: number;
  failAfter?: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface JobStatus {
  phase: JobPhase;
  node?: string;
  attempt: number;
  /** Runs its nodes lost (died, fenced, drained, shut down): they use no attempt (spec.maxDisruptions caps them). */
  disruptions?: number;
  assignment?: string;
  epoch?: number;
  startTime?: string;
  completionTime?: string;
  /** A Pending job's due time: it is not placed before it (start times, retry backoff). */
  dueTime?: string;
  conditions: Condition[];
}

/** One thing that happened, as a Kubernetes Event says it. */
interface EventFields {
  time: string;
  type: 'Normal' | 'Warning';
  reason: string;
  /** What it happened to, as kind/name. */
  object: string;
  message: string;
  epoch: number | null;
  /** The replica whose transaction made the change or recorded it, where known. */
  replica: string | null;
}

/**
 * One thing that happened to the cluster itself (`fencer get events`, the dashboard): reason
 * LeaderElected, NodeDied, NodeRegistered or FencedRejection; object replica/NAME or node/NAME.
 */
export type ClusterEvent = EventFields;

/**
 * One thing that happened to a job or one of its assignments (`fencer describe job`'s Events):
 * Warning for a run that failed, was lost or never confirmed, and a job that failed or died; the
 * reason is the history's, else the state reached; the object is `job` or `assignment/<id>`.
 */
export interface JobEvent extends EventFields {
  node: string | null;
  /** Who asked, for a user's action (replay, cancel). */
  actor: string | null;
}

export interface Job {
  apiVersion: typeof API_VERSION;
  kind: 'Job';
  metadata: ObjectMeta;
  spec: JobSpec;
  status?: JobStatus;
}

export interface NodeResource {
  apiVersion: typeof API_VERSION;
  kind: 'Node';
  metadata: ObjectMeta;
  spec: { capacity: { cpu: string; memory: string; jobs: number } };
  status: {
    phase: 'Ready' | 'Dead';
    allocated: { cpu: string; memory: string; jobs: number; unclaimed: number };
    lastHeartbeatTime: string;
    connected: boolean;
    conditions: Condition[];
  };
}

export interface List<T> {
  apiVersion: typeof API_VERSION;
  kind: string;
  items: T[];
}

/** A job after validation, in the units the scheduler computes with. */
export interface JobRequest {
  namespace: string;
  /** Empty when the server is to make one from generateName (and the request's Idempotency-Key). */
  name: string;
  generateName: string | null;
  labels: Record<string, string>;
  /** metadata.annotations, when there are some. */
  annotations?: Record<string, string>;
  spec: JobSpec;
  cpuMillis: number;
  memoryBytes: number;
  durationMs: number;
  nodeSelector: Record<string, string>;
  maxAttempts: number;
  image: string | null;
  /** The pool the job must run in (its workflow's spec.pool), matched against the node label `pool`. */
  pool: string | null;
  retryPolicy: RetryPolicy;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** When it is due: at a time, or a delay after the database accepts it (neither: at once). */
  startAt: string | null;
  startAfterMs: number | null;
  /** Names of jobs of the same namespace (its workflow's) that must succeed before it runs. */
  needs: string[];
  /** Its own duration plus the longest chain of jobs waiting on it: the critical-path key of placement. */
  pathMs: number;
  /** The workflow that owns it, by name, or null for a lone job. */
  workflow: string | null;
  /** The queue of its namespace it waits in. */
  queue: string;
  /** Its priority as an integer (PRIORITY_VALUES for the named ones). */
  priority: number;
}

export type WorkflowPhase = 'Running' | 'Succeeded' | 'Failed' | 'Cancelled';

export interface WorkflowJobSpec {
  name: string;
  needs?: string[];
  template: JobSpec;
}

export interface WorkflowSpec {
  /** Every job of the workflow runs on nodes whose label `pool` is this; a template cannot override it. */
  pool?: string;
  jobs: WorkflowJobSpec[];
}

export interface WorkflowStatus {
  phase: WorkflowPhase;
  /** Each job's phase, by its name within the workflow. */
  jobs: Array<{ name: string; job: string; phase: JobPhase; stage: number; reason?: string }>;
  startTime: string;
  completionTime?: string;
  conditions: Condition[];
}

export interface Workflow {
  apiVersion: typeof API_VERSION;
  kind: 'Workflow';
  metadata: ObjectMeta;
  spec: WorkflowSpec;
  status?: WorkflowStatus;
}

/** A workflow after validation: its own row and the jobs it creates (named `<workflow>-<job>`). */
export interface WorkflowRequest {
  namespace: string;
  name: string;
  generateName: string | null;
  labels: Record<string, string>;
  /** metadata.annotations, when there are some. */
  annotations?: Record<string, string>;
  spec: WorkflowSpec;
  jobs: JobRequest[];
}

export type LaneMode = 'weighted' | 'strict';

export interface QueueSpec {
  /** Its fair share against the other queues with ready jobs (default 1). */
  weight?: number;
  /** Most jobs of this queue placed (Assigned or Running) at once, cluster-wide. */
  concurrencyLimit?: number;
  /** Most CPU and memory its placed jobs may hold at once. */
  resourceLimit?: { cpu?: string | number; memory?: string | number };
  /** weighted (default): high 70 %, normal 20 %, low 10 %; strict: high, then normal, then low. */
  lanes?: LaneMode;
}

export interface QueueStatus {
  /** Jobs of the queue placed now (Assigned or Running), and what they hold. */
  running: number;
  allocated: { cpu: string; memory: string };
  /** Jobs of the queue not placed yet. */
  pending: number;
  oldestPendingTime?: string;
  conditions: Condition[];
}

export interface Queue {
  apiVersion: typeof API_VERSION;
  kind: 'Queue';
  metadata: ObjectMeta;
  spec: QueueSpec;
  status?: QueueStatus;
}

/** A queue after validation, in the units the scheduler computes with. */
export interface QueueRequest {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** metadata.annotations, when there are some. */
  annotations?: Record<string, string>;
  spec: QueueSpec;
  weight: number;
  concurrencyLimit: number | null;
  cpuLimitMillis: number | null;
  memoryLimitBytes: number | null;
  strictLanes: boolean;
}

export interface ResourceQuotaSpec {
  hard?: {
    /** Most jobs of the namespace not placed yet; a submit past it is refused (429). */
    pendingJobs?: number;
    /** Most CPU and memory the namespace's placed jobs may hold at once. */
    cpu?: string | number;
    memory?: string | number;
  };
  /** A token bucket on placements: perSecond jobs a second, up to burst at once. */
  placementRate?: { perSecond: number; burst?: number };
}

export interface ResourceQuota {
  apiVersion: typeof API_VERSION;
  kind: 'ResourceQuota';
  metadata: ObjectMeta;
  spec: ResourceQuotaSpec;
  status?: { used: { pendingJobs: number; cpu: string; memory: string }; conditions: Condition[] };
}

export interface ResourceQuotaRequest {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** metadata.annotations, when there are some. */
  annotations?: Record<string, string>;
  spec: ResourceQuotaSpec;
  pendingJobs: number | null;
  cpuLimitMillis: number | null;
  memoryLimitBytes: number | null;
  ratePerSecond: number | null;
  rateBurst: number | null;
}

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace';
export type CatchUp = 'latest' | 'all' | 'none';

export interface CronJobSpec {
  schedule: string;
  /** IANA zone the schedule is read in (default UTC). */
  timeZone?: string;
  suspend?: boolean;
  concurrencyPolicy?: ConcurrencyPolicy;
  /** What an outage's missed occurrences become (default latest). */
  catchUp?: CatchUp;
  startingDeadlineSeconds?: number;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  /** Exactly one of jobTemplate and workflowTemplate. */
  jobTemplate?: { metadata?: { labels?: Record<string, string> }; spec: JobSpec };
  workflowTemplate?: { metadata?: { labels?: Record<string, string> }; spec: WorkflowSpec };
}

export interface ObjectReference {
  apiVersion: typeof API_VERSION;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

export interface CronJobStatus {
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  nextScheduleTime?: string;
  activeCount: number;
  active: ObjectReference[];
  conditions: Condition[];
}

export interface CronJob {
  apiVersion: typeof API_VERSION;
  kind: 'CronJob';
  metadata: ObjectMeta;
  spec: CronJobSpec;
  status?: CronJobStatus;
}

/** A CronJob after validation; spec carries the CRD's defaults. */
export interface CronJobRequest {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** metadata.annotations, when there are some. */
  annotations?: Record<string, string>;
  spec: CronJobSpec &
    Required<
      Pick<
        CronJobSpec,
        | 'timeZone'
        | 'suspend'
        | 'concurrencyPolicy'
        | 'catchUp'
        | 'successfulJobsHistoryLimit'
        | 'failedJobsHistoryLimit'
      >
    >;
}

/** GET /api/v1/status */
export interface ClusterStatus {
  replica: string;
  leader: string | null;
  epoch: number;
  leaseExpiresAt: string | null;
  /** When the current holder took the lease (its epoch began). */
  leaderSince: string | null;
  replicas: Array<{ name: string; url: string; alive: boolean; leader: boolean; lastSeen: string }>;
  nodes: Array<{ name: string; phase: string; connected: boolean; jobs: number }>;
}

/** The error body every non-2xx API answer carries. */
export interface ErrorBody {
  error: {
    message: string;
    details?: Array<{ path: string; message: string; line?: number }>;
  };
}

export const DEFAULT_BACKOFF_BASE_MS = 1000;
export const DEFAULT_BACKOFF_CAP_MS = 5 * 60_000;

type CoreJobFields =
  | 'namespace'
  | 'name'
  | 'labels'
  | 'spec'
  | 'cpuMillis'
  | 'memoryBytes'
  | 'durationMs'
  | 'nodeSelector'
  | 'maxAttempts';

/** A lone job's request with every lifecycle field at its default (benchmarks and tests build these). */
export function withJobDefaults(core: Pick<JobRequest, CoreJobFields> & Partial<JobRequest>): JobRequest {
  return {
    generateName: null,
    image: null,
    pool: null,
    retryPolicy: 'OnFailure',
    backoffBaseMs: DEFAULT_BACKOFF_BASE_MS,
    backoffCapMs: DEFAULT_BACKOFF_CAP_MS,
    startAt: null,
    startAfterMs: null,
    needs: [],
    pathMs: core.durationMs,
    workflow: null,
    queue: DEFAULT_QUEUE,
    priority: 0,
    ...core,
  };
}

/** The most runs a node holds at once unless it says otherwise (its agent's --max-jobs), as kubelet's max pods. */
export const DEFAULT_MAX_JOBS = 110;
