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
  /** A node that reached no replica for this long stops its jobs (< deadAfterSilentMs). */
  selfFenceMs: number;
  /** A node with no open watch stream for this long stops its jobs (< deadAfterDisconnectMs). */
  selfFenceDisconnectedMs: number;
  /** A watch stream silent this long (no keepalive) is treated as broken. */
  watchSilenceMs: number;
  /** The placement controller's safety-net pass. */
  placementPassMs: number;
  /** node-health and job-reconcile passes. */
  reconcilePassMs: number;
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
  selfFenceMs: 3000,
  selfFenceDisconnectedMs: 800,
  watchSilenceMs: 1500,
  placementPassMs: 100,
  reconcilePassMs: 200,
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
  selfFenceMs: 'FENCER_SELF_FENCE_MS',
  selfFenceDisconnectedMs: 'FENCER_SELF_FENCE_DISCONNECTED_MS',
  watchSilenceMs: 'FENCER_WATCH_SILENCE_MS',
  placementPassMs: 'FENCER_PLACEMENT_PASS_MS',
  reconcilePassMs: 'FENCER_RECONCILE_PASS_MS',
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
  // A node checks its fence every 100 ms: each self-fence limit plus that must stay below the
  // matching dead timeout, or a node could still run a job the control plane has given away.
  if (timings.selfFenceMs + 100 >= timings.deadAfterSilentMs) {
    throw new Error('FENCER_SELF_FENCE_MS must be shorter than FENCER_DEAD_AFTER_SILENT_MS (by more than 100 ms), or two nodes may run a job at once');
  }
  if (timings.selfFenceDisconnectedMs + 100 >= timings.deadAfterDisconnectMs) {
    throw new Error('FENCER_SELF_FENCE_DISCONNECTED_MS must be shorter than FENCER_DEAD_AFTER_DISCONNECT_MS (by more than 100 ms), or two nodes may run a job at once');
  }
  // A live node's heartbeat is at most one interval old (plus its trip); only a stopped one
  // may count as quiet.
  if (timings.disconnectedQuietMs <= timings.heartbeatMs) {
    throw new Error('FENCER_DISCONNECTED_QUIET_MS must be longer than FENCER_HEARTBEAT_MS, or a node reconnecting its watch is declared dead');
  }
  return timings;
}

/** The environment a child process needs to run with these timings. */
export function timingsToEnv(timings: Timings): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of Object.keys(ENV_NAMES) as Array<keyof Timings>) env[ENV_NAMES[key]] = String(timings[key]);
  return env;
}
