// Every timing fencer runs on, in one place. Defaults follow the issue; each can be set from
// the environment (FENCER_<NAME> in milliseconds) so tests and chaos runs can tighten them.

export interface Timings {
  /** How long a lease lasts after its last renewal. */
  leaseMs: number;
  /** The leader renews every renewMs (a third of the lease). */
  renewMs: number;
  /** How often a standby looks at the lease and probes the leader's liveness lock. */
  standbyPollMs: number;
  /** Leader sessions die when idle inside a transaction longer than this (frees FOR SHARE). */
  idleInTxTimeoutMs: number;
  /** Nodes send a heartbeat this often. */
  heartbeatMs: number;
  /** A node with no heartbeat for this long is dead. */
  deadAfterSilentMs: number;
  /**
   * A node whose watch connection closed and did not come back within this is dead, if its
   * heartbeats have also stopped for disconnectedQuietMs (else after deadAfterSilentMs).
   */
  deadAfterDisconnectMs: number;
  /**
   * Heartbeats stopped this long, with the watch closed: dead. Longer than heartbeatMs, so a
   * live node reconnecting its watch (it still heartbeats) is not this quiet, while a killed
   * one is within half a second of deadAfterDisconnectMs.
   */
  disconnectedQuietMs: number;
  /** A placement the node never confirmed (started) within this goes back to pending. */
  confirmTimeoutMs: number;
  /**
   * How late a node's fence check may run (event-loop lag, a short stall) and still stop its jobs
   * before the control plane may declare it dead: the node's self-fence thresholds are the death
   * rule's, each this much plus FENCE_CHECK_MS earlier (selfFenceRule).
   */
  fenceLagMs: number;
  /** A watch stream silent this long (no keepalive) is treated as broken. */
  watchSilenceMs: number;
  /** The placement controller's safety-net pass. */
  placementPassMs: number;
  /** node-health and job-reconcile passes. */
  reconcilePassMs: number;
  /** The cron controller's look for due occurrences: the most a fire is late by, when all is well. */
  cronPassMs: number;
}

export const DEFAULT_TIMINGS: Timings = {
  leaseMs: 2000,
  renewMs: 667,
  standbyPollMs: 50,
  idleInTxTimeoutMs: 500,
  heartbeatMs: 1000,
  deadAfterSilentMs: 5000,
  deadAfterDisconnectMs: 1000,
  disconnectedQuietMs: 1500,
  confirmTimeoutMs: 5000,
  fenceLagMs: 250,
  watchSilenceMs: 1500,
  placementPassMs: 100,
  reconcilePassMs: 200,
  cronPassMs: 100,
};

const ENV_NAMES: Record<keyof Timings, string> = {
  leaseMs: 'FENCER_LEASE_MS',
  renewMs: 'FENCER_RENEW_MS',
  standbyPollMs: 'FENCER_STANDBY_POLL_MS',
  idleInTxTimeoutMs: 'FENCER_IDLE_IN_TX_TIMEOUT_MS',
  heartbeatMs: 'FENCER_HEARTBEAT_MS',
  deadAfterSilentMs: 'FENCER_DEAD_AFTER_SILENT_MS',
  deadAfterDisconnectMs: 'FENCER_DEAD_AFTER_DISCONNECT_MS',
  disconnectedQuietMs: 'FENCER_DISCONNECTED_QUIET_MS',
  confirmTimeoutMs: 'FENCER_CONFIRM_TIMEOUT_MS',
  fenceLagMs: 'FENCER_FENCE_LAG_MS',
  watchSilenceMs: 'FENCER_WATCH_SILENCE_MS',
  placementPassMs: 'FENCER_PLACEMENT_PASS_MS',
  reconcilePassMs: 'FENCER_RECONCILE_PASS_MS',
  cronPassMs: 'FENCER_CRON_PASS_MS',
};

export function timingsFromEnv(env: NodeJS.ProcessEnv = process.env): Timings {
  const timings = { ...DEFAULT_TIMINGS };
  for (const key of Object.keys(ENV_NAMES) as Array<keyof Timings>) {
    const raw = env[ENV_NAMES[key]];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) {
      throw new Error(`${ENV_NAMES[key]}: "${raw}" is not a positive number of milliseconds`);
    }
    timings[key] = value;
  }
  if (env.FENCER_LEASE_MS && !env.FENCER_RENEW_MS) timings.renewMs = Math.round(timings.leaseMs / 3);
  for (const gone of ['FENCER_SELF_FENCE_MS', 'FENCER_SELF_FENCE_DISCONNECTED_MS']) {
    if (env[gone])
      throw new Error(
        `${gone} is no longer set on its own: the self-fence follows the death rule, earlier by FENCER_FENCE_LAG_MS + ${FENCE_CHECK_MS} ms`,
      );
  }
  // The self-fence thresholds are the death rule's minus the margin: each must leave a live node
  // room for its heartbeats, or nodes fence themselves between two of them.
  const fence = selfFenceRule(timings);
  if (fence.quietMs <= timings.heartbeatMs) {
    throw new Error(
      `FENCER_DISCONNECTED_QUIET_MS (${timings.disconnectedQuietMs}) minus the fence margin (${fenceMarginMs(timings)} ms: FENCER_FENCE_LAG_MS + ${FENCE_CHECK_MS}) ` +
        `must be longer than FENCER_HEARTBEAT_MS (${timings.heartbeatMs}), or a node fences itself between two heartbeats`,
    );
  }
  if (fence.disconnectedMs <= 0) {
    throw new Error(
      `FENCER_DEAD_AFTER_DISCONNECT_MS (${timings.deadAfterDisconnectMs}) must be longer than the fence margin (${fenceMarginMs(timings)} ms: FENCER_FENCE_LAG_MS + ${FENCE_CHECK_MS})`,
    );
  }
  // A live node's heartbeat is at most one interval old (plus its trip); only a stopped one
  // may count as quiet.
  if (timings.disconnectedQuietMs <= timings.heartbeatMs) {
    throw new Error(
      'FENCER_DISCONNECTED_QUIET_MS must be longer than FENCER_HEARTBEAT_MS, or a node reconnecting its watch is declared dead',
    );
  }
  return timings;
}

/** How often a node applies its self-fence rule (and first thing in every callback). */
export const FENCE_CHECK_MS = 100;

/** How much earlier than the death rule a node fences itself: one check interval plus the lag allowed. */
export function fenceMarginMs(timings: Pick<Timings, 'fenceLagMs'>): number {
  return FENCE_CHECK_MS + timings.fenceLagMs;
}

/**
 * The node's self-fence: the control plane's death rule (node-health/dead_candidates.sql), on the
 * node's own clocks, each threshold earlier by the margin. The death rule reads the node's last
 * heartbeat and when its watch stream closed; the node reads when it sent its last heartbeat that
 * was answered 2xx (the database recorded it no earlier) and when its stream last delivered
 * anything, open or not (a replica records a close only after it stopped writing to the stream, so
 * no later than the last bytes it sent reached the node, give or take their trip: the margin
 * covers that too). So whenever the death rule could hold, this rule held at least the margin
 * before. Nothing else counts: a report or a watch open answered 2xx is not a heartbeat.
 */
export function selfFenceRule(
  timings: Pick<Timings, 'deadAfterSilentMs' | 'deadAfterDisconnectMs' | 'disconnectedQuietMs' | 'fenceLagMs'>,
) {
  const margin = fenceMarginMs(timings);
  return {
    silentMs: timings.deadAfterSilentMs - margin,
    disconnectedMs: timings.deadAfterDisconnectMs - margin,
    quietMs: timings.disconnectedQuietMs - margin,
  };
}

export type SelfFenceRule = ReturnType<typeof selfFenceRule>;

/**
 * How long past a run's claim plus its duration its node may still be running it: the run began
 * within the confirm timeout of the claim (the node gives back a claim answered later), and a
 * node stalled for less than the silence timeout ends it late by at most that. (A node stalled
 * longer is declared dead, or is a frozen node: the one fault no node can fence itself against.)
 */
export function overdueSlackMs(timings: Pick<Timings, 'confirmTimeoutMs' | 'deadAfterSilentMs'>): number {
  return timings.confirmTimeoutMs + timings.deadAfterSilentMs;
}

/**
 * How long a placement may wait to be sent to its node before it is taken back all the same (its
 * confirm deadline starts only when it is sent): a replica that holds the node's watch stream but
 * cannot read its snapshots must not pin the node's unclaimed assignments forever. Long enough that
 * a control plane merely slow to send is never judged by it.
 */
export function undeliveredMs(timings: Pick<Timings, 'confirmTimeoutMs'>): number {
  return 12 * timings.confirmTimeoutMs;
}

/** The environment a child process needs to run with these timings. */
export function timingsToEnv(timings: Timings): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of Object.keys(ENV_NAMES) as Array<keyof Timings>) env[ENV_NAMES[key]] = String(timings[key]);
  return env;
}

/** The most jobs one workflow may have (FENCER_WORKFLOW_MAX_JOBS, default 500): a bigger one is refused at submit. */
export function workflowMaxJobs(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_WORKFLOW_MAX_JOBS', 500);
}

/**
 * The most labels one object (a job, a workflow's job, a CronJob's template, an RBAC object, a
 * node) may carry, and the most keys a nodeSelector may name (FENCER_MAX_LABELS, default 64):
 * every label is matched and stored with each job.
 */
export function maxLabels(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_MAX_LABELS', 64);
}

/** The most bytes one object's annotations may take in all (FENCER_MAX_ANNOTATION_BYTES, default 256 KiB, as Kubernetes). */
export function maxAnnotationBytes(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_MAX_ANNOTATION_BYTES', 256 * 1024);
}

/**
 * The longest message a node may report with a run's outcome (FENCER_MAX_REPORT_MESSAGE_BYTES,
 * default 4 KiB): it becomes the job's status message and a history row's.
 */
export function maxReportMessageBytes(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_MAX_REPORT_MESSAGE_BYTES', 4096);
}

/** How deep a request's YAML or JSON may nest (FENCER_MAX_YAML_DEPTH, default 64; a Job needs about 8). */
export function maxYamlDepth(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_MAX_YAML_DEPTH', 64);
}

/**
 * How long the worker thread may spend reading one large body (FENCER_BODY_READ_TIMEOUT_MS,
 * default 30 s; src/api/validation/off-loop.ts): past it the thread is ended and the request is
 * 413. A 16 MiB batch of plain jobs reads in well under that; a mapping of many keys may not.
 */
export function bodyReadTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_BODY_READ_TIMEOUT_MS', 30_000);
}

/**
 * The most memory (MiB of its V8 old generation) the worker thread may take to read one large
 * body (FENCER_BODY_READ_MEMORY_MB, default 256; src/api/validation/off-loop.ts): past it the
 * thread is ended and the request is 413. A 16 MiB batch of plain jobs needs about 200. Without a
 * bound V8 lets the thread's heap grow far past what it keeps alive, and a burst of 1,000-job
 * batches held ~60 MiB more of the replica's memory.
 */
export function bodyReadMemoryMb(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_BODY_READ_MEMORY_MB', 256);
}

/**
 * How many large bodies may wait for the worker thread on one replica (FENCER_MAX_QUEUED_BODIES,
 * default 16): past it, 429 with Retry-After, nothing read.
 */
export function maxQueuedBodies(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_MAX_QUEUED_BODIES', 16);
}

/**
 * How long an Idempotency-Key is kept (FENCER_IDEMPOTENCY_KEY_TTL_MS, default 24 h): a retry
 * within it gets the object the first request made; past it the key is free again (taken over by
 * its next use, deleted by the leader's prune pass).
 */
export function idempotencyKeyTtlMs(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_IDEMPOTENCY_KEY_TTL_MS', 24 * 3_600_000);
}

/**
 * The most jobs that may wait to be placed, cluster-wide (FENCER_MAX_PENDING, default 200,000):
 * past it, submissions get 429 with Retry-After (src/api/backlog.ts).
 */
export function maxPendingJobs(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_MAX_PENDING', 200_000);
}

/**
 * The most assignments a node may have that it has not claimed yet (FENCER_MAX_UNCLAIMED_PER_NODE):
 * placement gives a node more only as it claims what it has, so in a burst nothing waits long
 * enough in a node's backlog to outlast the confirm timeout, and each job gets one assignment.
 * One claim request takes them all.
 */
export const DEFAULT_MAX_UNCLAIMED = 64;

export function maxUnclaimedPerNode(env: NodeJS.ProcessEnv = process.env): number {
  return positiveInteger(env, 'FENCER_MAX_UNCLAIMED_PER_NODE', DEFAULT_MAX_UNCLAIMED);
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name}: "${raw}" is not a positive integer`);
  return value;
}

/** A replica that has not said it is alive for this long counts as gone (`fencer cluster status`). */
export function replicaGoneMs(timings: Pick<Timings, 'heartbeatMs'>): number {
  return 3 * timings.heartbeatMs;
}
