// How a node talks to the control plane: any replica will do (DESIGN.md, promise 4), so every
// request goes to the replica that last answered and, on a network error, a timeout or a 5xx,
// moves on round robin to the next. A frozen replica costs one timeout, never a stuck agent.

import type { WatchMessage } from '../domain/assignment.js';

export interface ReplicaClientOptions {
  /** Base URLs of the control-plane replicas, e.g. http://127.0.0.1:7070 */
  replicas: readonly string[];
  /** Per request, heartbeats included; for a watch, until its response headers. */
  timeoutMs?: number;
  /** Picks the replica tried first (e.g. the node's name), so agents spread over replicas. */
  spreadKey?: string;
  /**
   * Called with the local monotonic time at which a request was SENT, whenever it got a 2xx.
   * The send time, not the answer's: a reply that lands after the agent was frozen says
   * nothing about the control plane hearing from the node recently.
   */
  onContact?: (sentAt: number) => void;
}

export interface ReplicaReply<T> {
  status: number;
  /** The parsed JSON body, if there was one. Errors carry { error: { message } }. */
  body: T | undefined;
  replica: string;
  sentAt: number;
}

/** No replica answered in one full round. */
export class ReplicaUnreachableError extends Error {
  constructor(what: string, readonly causes: string[]) {
    super(`${what}: no replica answered (${causes.join('; ')})`);
    this.name = 'ReplicaUnreachableError';
  }
}

/** A watch stream delivered nothing (not even a keepalive) for too long. */
export class WatchSilentError extends Error {
  constructor(replica: string, silenceMs: number) {
    super(`watch stream from ${replica} silent for ${silenceMs} ms`);
    this.name = 'WatchSilentError';
  }
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 500;

function stableHash(text: string): number {
  let hash = 2166136261; // FNV-1a
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
  return hash;
}

export class ReplicaClient {
  private readonly replicas: string[];
  private readonly timeoutMs: number;
  private preferred = 0;

  constructor(private readonly options: ReplicaClientOptions) {
    if (options.replicas.length === 0) throw new Error('at least one replica URL is needed');
    this.replicas = options.replicas.map((url) => url.replace(/\/+$/, ''));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    // Agents given the same list should not all start on its first replica (often the leader,
    // busy deciding): a stable pick per agent spreads them over the replicas.
    if (options.spreadKey !== undefined) this.preferred = stableHash(options.spreadKey) % this.replicas.length;
  }

  /** The replica that answered last (where the next request goes first). */
  get current(): string {
    return this.replicas[this.preferred] as string;
  }

  /** Moves away from a replica that failed outside a request (e.g. its watch stream broke). */
  demote(replica: string): void {
    if (this.current === replica) this.preferred = (this.preferred + 1) % this.replicas.length;
  }

  /**
   * Sends one request, trying each replica at most once, starting with the preferred one.
   * Any answer below 500 is returned (404, 409 and 410 mean something to the caller); network
   * errors, timeouts and 5xx move on to the next replica. Throws ReplicaUnreachableError after
   * a full round, or the abort reason when `signal` fires.
   */
  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<ReplicaReply<T>> {
    const causes: string[] = [];
    for (let tried = 0; tried < this.replicas.length; tried++) {
      signal?.throwIfAborted();
      const index = (this.preferred + tried) % this.replicas.length;
      const replica = this.replicas[index] as string;
      const sentAt = performance.now();
      try {
        const { status, text } = await this.exchange(replica, method, path, body, signal);
        if (status >= 500) {
          causes.push(`${replica}: HTTP ${status}`);
          continue;
        }
        this.preferred = index;
        if (status < 300) this.options.onContact?.(sentAt);
        return { status, body: text === '' ? undefined : (JSON.parse(text) as T), replica, sentAt };
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        causes.push(`${replica}: ${describe(err)}`);
      }
    }
    throw new ReplicaUnreachableError(`${method} ${path}`, causes);
  }

  /**
   * Opens the NDJSON watch stream on the first replica (round robin from the preferred one)
   * that answers 200 within the request timeout. Throws ReplicaUnreachableError otherwise.
   */
  async openWatch(path: string, silenceMs: number, signal?: AbortSignal): Promise<WatchStream> {
    const causes: string[] = [];
    for (let tried = 0; tried < this.replicas.length; tried++) {
      signal?.throwIfAborted();
      const index = (this.preferred + tried) % this.replicas.length;
      const replica = this.replicas[index] as string;
      const controller = new AbortController();
      const onAbort = () => controller.abort(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      const sentAt = performance.now();
      try {
        const response = await fetch(`${replica}${path}`, { signal: controller.signal, headers: { accept: 'application/x-ndjson' } });
        clearTimeout(timer);
        if (response.status !== 200 || response.body === null) {
          await response.body?.cancel().catch(() => undefined);
          throw new Error(`HTTP ${response.status}`);
        }
        this.preferred = index;
        this.options.onContact?.(sentAt);
        return new WatchStream(replica, response.body, controller, silenceMs, () => signal?.removeEventListener('abort', onAbort));
      } catch (err) {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        controller.abort();
        if (signal?.aborted) throw signal.reason;
        causes.push(`${replica}: ${describe(err)}`);
      }
    }
    throw new ReplicaUnreachableError(`GET ${path}`, causes);
  }

  private async exchange(
    replica: string,
    method: string,
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; text: string }> {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    // The timeout covers the body too: a replica frozen mid-answer is as gone as a dead one.
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      const response = await fetch(`${replica}${path}`, {
        method,
        signal: controller.signal,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, text: await response.text() };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** One open watch stream: its messages, when it last delivered anything, and a way to close it. */
export class WatchStream {
  /** Local monotonic time of the last bytes received (or of opening). */
  lastDeliveryAt = performance.now();

  constructor(
    readonly replica: string,
    private readonly body: ReadableStream<Uint8Array>,
    private readonly controller: AbortController,
    private readonly silenceMs: number,
    private readonly release: () => void,
  ) {}

  close(): void {
    this.controller.abort();
  }

  /**
   * The stream's messages, one per NDJSON line. Ends when the replica ends the stream; throws
   * WatchSilentError after silenceMs without a single byte, or the network error.
   */
  async *messages(): AsyncGenerator<WatchMessage> {
    const reader = this.body.getReader();
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for (;;) {
        const result = await this.readWithinSilence(reader);
        if (result.done) return;
        this.lastDeliveryAt = performance.now();
        pending += decoder.decode(result.value, { stream: true });
        for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          if (line !== '') yield JSON.parse(line) as WatchMessage;
        }
      }
    } finally {
      this.controller.abort();
      this.release();
      try {
        reader.releaseLock();
      } catch {
        // a read still pending on an aborted stream; the stream is gone either way
      }
    }
  }

  private readWithinSilence(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadableStreamReadResult<Uint8Array>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.controller.abort();
        reject(new WatchSilentError(this.replica, this.silenceMs));
      }, this.silenceMs);
      reader.read().then(
        (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // undici hides the interesting part (ECONNREFUSED, ...) in `cause`
  const cause = (err as Error & { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
}
