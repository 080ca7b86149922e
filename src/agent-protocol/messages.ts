// What a node is told to run, as carried on the watch stream (NODE_ROUTES.watch, ./routes.ts).

export interface AssignmentMessage {
  id: string;
  jobUid: string;
  job: string; // namespace/name
  epoch: number;
  attempt: number;
  cpuMillis: number;
  memoryBytes: number;
  durationMs: number;
  state: 'Assigned' | 'Running';
  /** Set when this attempt is to fail (spec.simulate): the exit code, after failAfterMs (else the whole duration). */
  failExitCode?: number;
  failAfterMs?: number;
}

/**
 * One NDJSON line on the watch stream. A snapshot lists every active assignment of the node,
 * so a node that reconnects (to any replica) resumes from the first snapshot it gets: the
 * stream is level-triggered, like everything else. An assignment missing from a snapshot is
 * no longer active, and the node stops it.
 */
export type WatchMessage = { type: 'snapshot'; assignments: AssignmentMessage[] } | { type: 'keepalive' };

/** POST NODE_ROUTES.register (./routes.ts) */
export interface RegisterRequest {
  name: string;
  /** jobs: the most runs it holds at once (default DEFAULT_MAX_JOBS), as kubelet's max pods. */
  capacity: { cpu: string | number; memory: string | number; jobs?: number };
  labels?: Record<string, string>;
  /** Images the node holds: a job with spec.image runs only on a node that holds it. */
  images?: string[];
  /** A fresh id per agent process: a new one means the previous process's jobs are gone. */
  incarnation?: string;
  /** Counts the node's agent processes (kept on its disk): an older one's late registration is refused (409). */
  generation?: number;
}

export interface RegisterResponse {
  name: string;
  heartbeatIntervalMs: number;
  /** The generation the node's row holds now (the one asked, clamped to the database's clock plus a skew). */
  generation: number | null;
  /**
   * The node credential for this process (src/domain/node-identity.ts), sent as its bearer token
   * from now on, and when it expires (RFC 3339). Null from a replica without authentication.
   */
  credential: string | null;
  credentialExpiresAt: string | null;
}

/** POST NODE_ROUTES.heartbeat: the node lives; a fresh credential once half of the current one's life is gone. */
export interface HeartbeatResponse {
  ok: true;
  credential?: string;
  credentialExpiresAt?: string;
}
