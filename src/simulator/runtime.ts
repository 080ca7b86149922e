// The runtime interface: how the simulator starts, stops and disturbs the processes of a
// cluster (replicas, worker agents, proxies). Chaos acts through the same calls, so a test
// that freezes a leader reads the same whether the leader is a child process or a container.

export interface ProcessSpec {
  /** Unique within the runtime: `replica-1`, `node-3`, `node-3-proxy`. */
  name: string;
  /** Arguments after the fencer binary, e.g. ['replica', '--name', 'replica-1', ...]. */
  args: string[];
  /** Added to the environment the runtime passes through. */
  env: Record<string, string>;
  /** stdout and stderr are appended here. */
  logFile: string;
  /** CPU limit in cores (e.g. 0.5); only the docker runtime enforces it. */
  cpus?: number;
  /** Memory limit in bytes; only the docker runtime enforces it. */
  memoryBytes?: number;
  /** Niceness (1–19, lower priority); only the process runtime applies it. */
  nice?: number;
}

export interface ProcessHandle {
  name: string;
  pid: number;
}

export interface ExitEvent {
  name: string;
  pid: number;
  /** null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Runtime {
  start(spec: ProcessSpec): Promise<ProcessHandle>;
  /** Gone at once, without a chance to clean up (SIGKILL, `docker kill`). */
  kill(name: string): Promise<void>;
  /** Still there but does nothing: no heartbeat, no lease renewal (SIGSTOP, `docker pause`). */
  freeze(name: string): Promise<void>;
  resume(name: string): Promise<void>;
  /** Graceful first (SIGTERM), forceful after timeoutMs; resolves once it exited. */
  stop(name: string, timeoutMs?: number): Promise<void>;
  /** Started and not exited yet; a frozen process is running. */
  isRunning(name: string): boolean;
  isFrozen(name: string): boolean;
  /** On the host: the child's pid, or a container's init process. */
  pid(name: string): number | undefined;
  /** Every process this runtime started and that is still running. */
  names(): string[];
  /** Every exit, expected or not; returns the unsubscribe function. */
  onExit(listener: (event: ExitEvent) => void): () => void;
}

/** A name the runtime never started or that already exited. */
export class NotRunningError extends Error {
  constructor(readonly processName: string) {
    super(`${processName} is not running`);
    this.name = 'NotRunningError';
  }
}
