// The Kubernetes-style shapes fencer speaks on its API, in its CLI and in YAML.
// These are the wire contract: scripts and users rely on them (see DESIGN.md, "Contracts").

export const API_VERSION = 'fencer.dev/v1';

export type JobPhase =
  | 'Pending'
  | 'Assigned'
  | 'Running'
  | 'Succeeded'
  | 'Failed'
  | 'Cancelled'
  | 'Skipped'
  | 'Dead';

export const TERMINAL_PHASES: readonly JobPhase[] = ['Succeeded', 'Failed', 'Cancelled', 'Skipped', 'Dead'];

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
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
  /** Whether a failure of the job itself is retried (OnFailure, the default) or final (Never). */
  retryPolicy?: RetryPolicy;
  /** Full-jitter exponential backoff between attempts: delay = random(0, min(cap, base·2^attempt)). */
  backoff?: { base?: string; cap?: string };
  /** Due at this time (RFC 3339), or this long after it was accepted; never placed before. */
  startAt?: string;
  startAfter?: string;
  /** Test and demo outcomes: the first failAttempts runs fail with exitCode, after failAfter if given. */
  simulate?: SimulateSpec;
}

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
  assignment?: string;
  epoch?: number;
  startTime?: string;
  completionTime?: string;
  /** A Pending job's due time: it is not placed before it (start times, retry backoff). */
  dueTime?: string;
  conditions: Condition[];
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
  spec: { capacity: { cpu: string; memory: string } };
  status: {
    phase: 'Ready' | 'Dead';
    allocated: { cpu: string; memory: string };
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
  spec: WorkflowSpec;
  jobs: JobRequest[];
}

/** GET /api/v1/status */
export interface ClusterStatus {
  replica: string;
  leader: string | null;
  epoch: number;
  leaseExpiresAt: string | null;
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

type CoreJobFields = 'namespace' | 'name' | 'labels' | 'spec' | 'cpuMillis' | 'memoryBytes' | 'durationMs' | 'nodeSelector' | 'maxAttempts';

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
    ...core,
  };
}
