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
  maxAttempts?: number;
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
  name: string;
  labels: Record<string, string>;
  spec: JobSpec;
  cpuMillis: number;
  memoryBytes: number;
  durationMs: number;
  nodeSelector: Record<string, string>;
  maxAttempts: number;
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
