// A namespace as GET /api/v1/namespaces/NS shows it: not a stored object (a namespace is a name
// its jobs, queues and quota share) but what it uses against its limits, read in one go.

export interface NamespaceQueueUse {
  name: string;
  weight: number;
  /** Jobs of the queue placed now (Assigned or Running), against its concurrencyLimit if it has one. */
  running: number;
  concurrencyLimit?: number;
  allocated: { cpu: string; memory: string };
  resourceLimit?: { cpu?: string; memory?: string };
  pending: number;
  oldestPendingTime?: string;
}

export interface NamespaceQuotaUse {
  /** The ResourceQuota's name. */
  name: string;
  hard: { pendingJobs?: number; cpu?: string; memory?: string };
  used: { pendingJobs: number; cpu: string; memory: string };
  placementRate?: { perSecond: number; burst: number };
}

export interface NamespaceStatus {
  /** Always Active: a fencer namespace is a name, never being deleted. */
  phase?: 'Active';
  /** Jobs of the namespace not placed yet. */
  pendingJobs: number;
  /** Jobs of the namespace placed now (Assigned or Running), and what they hold. */
  runningJobs: number;
  allocated: { cpu: string; memory: string };
  /** The job that has waited longest to be placed, and since when (its acceptance). */
  oldestPending?: { name: string; since: string };
  quota?: NamespaceQuotaUse;
  queues: NamespaceQueueUse[];
}

/** A core Namespace (it lives at /api/v1/namespaces/NAME, where Kubernetes clients look), with fencer's use in its status. */
export interface NamespaceResource {
  apiVersion: 'v1';
  kind: 'Namespace';
  metadata: { name: string };
  status: NamespaceStatus;
}
