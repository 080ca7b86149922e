// How a node talks to the control plane: any replica will do (docs/architecture.md, promise 4), so every
// request goes to the replica that last answered and, on a network error, a timeout or a 5xx,
// moves on round robin to the next. A frozen replica costs one timeout, never a stuck agent.

import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import { LineSplitter } from '../net/lines.js';
import type { WatchMessage } from '../agent-protocol/messages.js';

export interface ReplicaClientOptions {
  /** Base URLs of the control-plane replicas, e.g. http://127.0.0.1:7070 */
  replicas: readonly string[];
  /** Per request, heartbeats included; for a watch, until its response headers. */
  timeoutMs?: number;
  /** Picks the replica tried first (e.g. the node's name), so agents spread over replicas. */
  spreadKey?: string;
  /** The node's bearer token (its credential, docs/security.md), sent with every request; setToken() replaces it. */
  token?: string;
  /** The CA (PEM) an https replica's certificate is verified against (default: the system's CAs). */
  ca?: string;
}

export interface ReplicaReply<T> {
  status: number;
  /** The parsed JSON body, if there was one. Errors carry { error: { message } }. */
  body: T | undefined;
  replica: string;
  /**
   * Local monotonic time the request was SENT: a reply that lands after the process was frozen
   * says nothing about the control plane hearing from it recently.
   */
  sentAt: number;
}

/** No replica answered in one full round. */
export class ReplicaUnreachableError extends Error {
  constructor(
    what: string,
    readonly causes: string[],
  ) {
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
  /**
   * Kept-alive connections: a heartbeat a second per node over a fresh connection (or through
   * fetch) costs several times the CPU, and a hundred nodes share two cores with the control plane.
   * Over TLS the more so: a handshake is a key exchange, while a request on an open TLS
   * connection costs only its symmetric encryption (and a reconnect resumes the session).
   */
  private readonly sockets = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
  private readonly tlsSockets: https.Agent;
  private authorization: http.OutgoingHttpHeaders;

  constructor(private readonly options: ReplicaClientOptions) {
    if (options.replicas.length === 0) throw new Error('at least one replica URL is needed');
    this.replicas = options.replicas.map((url) => url.replace(/\/+$/, ''));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.authorization = options.token ? { authorization: `Bearer ${options.token}` } : {};
    // The certificate is always verified: against `ca`, else the system's CAs.
    this.tlsSockets = new https.Agent({ keepAlive: true, scheduling: 'lifo', ca: options.ca });
    // Agents given the same list should not all start on its first replica (often the leader,
    // busy deciding): a stable pick per agent spreads them over the replicas.
    if (options.spreadKey !== undefined) this.preferred = stableHash(options.spreadKey) % this.replicas.length;
  }

  /** The bearer token of every request from now on (a renewed credential). */
  setToken(token: string | undefined): void {
    this.authorization = token ? { authorization: `Bearer ${token}` } : {};
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
   * a full round, or the abort reason when `signal` fires. `timeoutMs` (default the client's)
   * is how long one replica has to answer before the next is tried; `bearer` (a join token) is
   * sent instead of the client's token.
   */
  async request<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    signal?: AbortSignal,
    timeoutMs = this.timeoutMs,
    bearer?: string,
  ): Promise<ReplicaReply<T>> {
    const causes: string[] = [];
    for (let tried = 0; tried < this.replicas.length; tried++) {
      signal?.throwIfAborted();
      const index = (this.preferred + tried) % this.replicas.length;
      const replica = this.replicas[index] as string;
      const sentAt = performance.now();
      try {
        const { status, text } = await this.exchange(replica, method, path, body, signal, timeoutMs, bearer);
        if (status >= 500) {
          causes.push(`${replica}: HTTP ${status}`);
          continue;
        }
        this.preferred = index;
        return { status, body: text === '' ? undefined : (JSON.parse(text) as T), replica, sentAt };
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        causes.push(`${replica}: ${describe(err)}`);
      }
    }
    throw new ReplicaUnreachableError(`${method} ${path}`, causes);
  }

  /**
   * A request whose late answer is still worth having: a heartbeat counts from its sending,
   * however late its answer lands. It goes to the preferred replica and, each request timeout it
   * stays unanswered (at once when every attempt so far failed), also to the next, once per
   * replica; every attempt stays open up to `patienceMs` after its sending. The first answer
   * below 500 wins, the others are dropped; `sentAt` is the winning attempt's. Throws
   * ReplicaUnreachableError when every attempt failed, or the abort reason when `signal` fires.
   */
  hedged<T>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    patienceMs: number,
    signal?: AbortSignal,
  ): Promise<ReplicaReply<T>> {
    signal?.throwIfAborted();
    const first = this.preferred;
    const drop = new AbortController();
    const causes: string[] = [];
    let started = 0;
    let failed = 0;
    let settled = false;
    let hedge: NodeJS.Timeout | undefined;
    return new Promise((resolve, reject) => {
      const onAbort = () => finish(() => reject(signal?.reason));
      signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(hedge);
        signal?.removeEventListener('abort', onAbort);
        drop.abort(new Error('answered by another replica'));
        outcome();
      };
      const attempt = () => {
        clearTimeout(hedge);
        if (settled || started === this.replicas.length) return;
        const index = (first + started++) % this.replicas.length;
        const replica = this.replicas[index] as string;
        const sentAt = performance.now();
        const fail = (cause: string) => {
          causes.push(`${replica}: ${cause}`);
          if (++failed === this.replicas.length)
            finish(() => reject(new ReplicaUnreachableError(`${method} ${path}`, causes)));
          else if (failed === started) attempt();
        };
        this.exchange(replica, method, path, body, drop.signal, patienceMs).then(
          ({ status, text }) => {
            if (settled) return;
            if (status >= 500) return fail(`HTTP ${status}`);
            let parsed: T | undefined;
            try {
              parsed = text === '' ? undefined : (JSON.parse(text) as T);
            } catch (err) {
              return fail(describe(err));
            }
            this.preferred = index;
            finish(() => resolve({ status, body: parsed, replica, sentAt }));
          },
          (err: unknown) => {
            if (!settled) fail(describe(err));
          },
        );
        if (started < this.replicas.length) hedge = setTimeout(attempt, this.timeoutMs);
      };
      attempt();
    });
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
      try {
        const { response, release } = await this.openStream(replica, path, signal);
        this.preferred = index;
        return new WatchStream(replica, response, silenceMs, release);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        causes.push(`${replica}: ${describe(err)}`);
      }
    }
    throw new ReplicaUnreachableError(`GET ${path}`, causes);
  }

  /** One request and its whole answer, within the timeout. */
  private exchange(
    replica: string,
    method: string,
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    bearer?: string,
  ): Promise<{ status: number; text: string }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const authorization = bearer === undefined ? this.authorization : { authorization: `Bearer ${bearer}` };
    const headers: http.OutgoingHttpHeaders =
      payload === undefined
        ? { ...authorization }
        : { ...authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    return new Promise((resolve, reject) => {
      const request = this.send(`${replica}${path}`, { method, headers });
      // The timeout covers the body too: a replica frozen mid-answer is as gone as a dead one.
      const stopWaiting = this.bound(request, signal, timeoutMs);
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        stopWaiting();
        outcome();
      };
      request.on('error', (err) => settle(() => reject(err)));
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          settle(() => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') })),
        );
        response.on('error', (err) => settle(() => reject(err)));
        response.on('close', () => settle(() => reject(new Error('connection closed mid-answer'))));
      });
      request.end(payload);
    });
  }

  /** A watch request, resolved at its response headers (status 200) within the timeout. */
  private openStream(
    replica: string,
    path: string,
    signal: AbortSignal | undefined,
  ): Promise<{ response: http.IncomingMessage; release: () => void }> {
    return new Promise((resolve, reject) => {
      const request = this.send(`${replica}${path}`, {
        headers: { ...this.authorization, accept: 'application/x-ndjson' },
      });
      const stopTimer = this.bound(request, undefined, this.timeoutMs);
      const onAbort = () => request.destroy(abortReason(signal));
      signal?.addEventListener('abort', onAbort, { once: true });
      const release = () => signal?.removeEventListener('abort', onAbort);
      request.on('error', (err) => {
        stopTimer();
        release();
        reject(err);
      });
      request.on('response', (response) => {
        stopTimer();
        if (response.statusCode !== 200) {
          response.resume(); // drain it, so the connection can serve the next request
          release();
          reject(new Error(`HTTP ${response.statusCode}`));
          return;
        }
        // The stream is open from here on: the signal still closes it, until it ends.
        resolve({ response, release });
      });
      request.end();
    });
  }

  /** A request over the kept-alive connections of its URL's scheme. */
  private send(url: string, options: http.RequestOptions): http.ClientRequest {
    return url.startsWith('https:')
      ? https.request(url, { ...options, agent: this.tlsSockets })
      : http.request(url, { ...options, agent: this.sockets });
  }

  /** Destroys the request after the timeout or when `signal` aborts; returns what undoes both. */
  private bound(request: http.ClientRequest, signal: AbortSignal | undefined, timeoutMs: number): () => void {
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => request.destroy(abortReason(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    return () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
  }
}

/** One open watch stream: its messages, when it last delivered anything, and a way to close it. */
export class WatchStream {
  /** Local monotonic time of the last bytes received (or of opening). */
  lastDeliveryAt = performance.now();

  constructor(
    readonly replica: string,
    private readonly response: http.IncomingMessage,
    private readonly silenceMs: number,
    private readonly release: () => void,
  ) {}

  close(): void {
    this.response.destroy();
  }

  /**
   * The stream's messages, one per NDJSON line. Ends when the replica ends the stream; throws
   * WatchSilentError after silenceMs without a single byte, or the network error.
   */
  async *messages(): AsyncGenerator<WatchMessage> {
    const decoder = new StringDecoder('utf8');
    const lines = new LineSplitter();
    let silent = false;
    let timer: NodeJS.Timeout | undefined;
    // Armed only while waiting for bytes: the time the caller spends on a message is not silence.
    const arm = () => {
      timer = setTimeout(() => {
        silent = true;
        this.response.destroy();
      }, this.silenceMs);
    };
    try {
      arm();
      for await (const chunk of this.response) {
        clearTimeout(timer);
        this.lastDeliveryAt = performance.now();
        for (const line of lines.push(decoder.write(chunk as Buffer))) yield JSON.parse(line) as WatchMessage;
        arm();
      }
      if (silent) throw new WatchSilentError(this.replica, this.silenceMs);
    } catch (err) {
      throw silent ? new WatchSilentError(this.replica, this.silenceMs) : err;
    } finally {
      clearTimeout(timer);
      this.response.destroy();
      this.release();
    }
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new Error('aborted');
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // undici hides the interesting part (ECONNREFUSED, ...) in `cause`
  const cause = (err as Error & { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
}
