// The one client of the API for everything that is not an agent or the dashboard: the CLI, the
// simulator, the benchmarks and the chaos job flow. Any replica serves the API
// (docs/architecture.md, promise 4), so a request goes to the replica that answered last
// (src/net/any-replica.ts) and moves on to the next when one is dead, frozen (only a timeout
// tells) or says "not me, not now". Waiting and sending again is this module's too, and only
// here: a 429 is waited out for as long as its Retry-After says, and a round in which no
// replica answered may be tried again after a pause.
import type { ClusterStatus, ErrorBody } from '../domain/resources.js';
import { ApiError, type ErrorDetail } from '../errors/api-error.js';
import { UnreachableError } from '../errors/unreachable-error.js';
import { delay } from '../lifecycle.js';
import { ReplicaList, askReplicas, describeFetchFailure, type Attempt } from './any-replica.js';
import { caFromEnv, fetchTrusting } from './tls.js';

// A frozen replica (SIGSTOP) still accepts TCP connections through the kernel backlog but
// never answers, so only a timeout tells it apart from a slow one.
const DEFAULT_TIMEOUT_MS = 2000;

// These say "not me, not now" (a proxy without a backend, a replica cut off from PostgreSQL):
// another replica may well succeed, unlike a 4xx, which every replica would repeat.
const TRY_NEXT_STATUSES: readonly number[] = [502, 503, 504];

/**
 * For the clients of a cluster under test (simulator, benchmarks, chaos): a 500 is a transaction
 * cut short (a failover, a replica stalled past the idle-in-transaction limit), and what they
 * send is named or all-or-nothing, so asking the next replica is safe.
 */
export const TRY_NEXT_AFTER_500: readonly number[] = [500, ...TRY_NEXT_STATUSES];

const RETRY_LATER_FOR_MS = 5 * 60_000;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiResponse<T> {
  status: number;
  body: T;
  server: string;
}

export interface ApiClientOptions {
  /** Per request, until the whole answer is read (default 2 s). */
  timeoutMs?: number;
  /**
   * How long in all to wait out 429s with Retry-After (a full backlog, a quota) before giving up
   * (default 5 min). Safe for writes: a named object sent again is unchanged, and a generated
   * name is sent with an Idempotency-Key.
   */
  retryLaterForMs?: number;
  /**
   * Rounds over the replicas before giving up when none answered (default 1: say so at once), and
   * the pause between two rounds. Sending a write again is as safe as after a 429.
   */
  rounds?: number;
  roundPauseMs?: number;
  /** Statuses after which the next replica is asked (default 502, 503, 504); others are final. */
  tryNextStatuses?: readonly number[];
  /** Sent with every request (the CLI says who asks). */
  headers?: Record<string, string>;
  /**
   * The bearer token sent with every request (docs/security.md); default FENCER_TOKEN. A
   * cluster's own clients pass its admin token (Cluster.client(), the CLI's token lookup).
   */
  token?: string;
  /**
   * The CA (PEM) an https replica's certificate is verified against (src/net/tls.ts); default
   * FENCER_CA's file, else the system's CAs.
   */
  ca?: string;
  /** Told before each pause after which a request is sent again: why, and for how long. */
  onRetry?: (why: string, waitMs: number) => void;
  /** Stops the retries and cuts a pause short (a request in flight runs to its timeout). */
  signal?: AbortSignal;
}

export class ApiClient {
  readonly servers: string[];
  private readonly timeoutMs: number;
  private readonly retryLaterForMs: number;
  private readonly rounds: number;
  private readonly roundPauseMs: number;
  private readonly tryNextStatuses: ReadonlySet<number>;
  private readonly headers: Record<string, string>;
  private readonly onRetry: (why: string, waitMs: number) => void;
  private readonly signal: AbortSignal | undefined;
  private readonly fetch: typeof fetch;
  // Start where the last request succeeded, so a multi-document apply pays the timeout of a
  // dead replica once rather than once per document.
  private readonly replicas: ReplicaList;

  constructor(servers: readonly string[], options: ApiClientOptions = {}) {
    if (servers.length === 0) throw new Error('no fencer server given');
    this.servers = servers.map(normalizeServer);
    this.replicas = new ReplicaList(this.servers);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retryLaterForMs = options.retryLaterForMs ?? RETRY_LATER_FOR_MS;
    this.rounds = options.rounds ?? 1;
    this.roundPauseMs = options.roundPauseMs ?? 1000;
    this.tryNextStatuses = new Set(options.tryNextStatuses ?? TRY_NEXT_STATUSES);
    const token = options.token ?? process.env.FENCER_TOKEN;
    this.headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers };
    this.onRetry = options.onRetry ?? (() => {});
    this.signal = options.signal;
    this.fetch = fetchTrusting(options.ca ?? caFromEnv());
  }

  /** The cluster's status as any replica sees it: the leader, its epoch, the replicas alive. */
  status(): Promise<ClusterStatus> {
    return this.request<ClusterStatus>('GET', '/api/v1/status');
  }

  /**
   * Submits jobs (`POST /api/v1/jobs`): a manifest as YAML text, or one manifest or an array of
   * them (all taken or none) as JSON. 201 created, 200 unchanged (sent before, answer lost).
   */
  submitJobs(manifests: string | object | readonly object[]): Promise<ApiResponse<unknown>> {
    return this.exchange('POST', '/api/v1/jobs', manifests);
  }

  async request<T>(method: HttpMethod, path: string, body?: string | object, contentType?: string): Promise<T> {
    return (await this.exchange<T>(method, path, body, contentType)).body;
  }

  /**
   * Like request, but also says which status the server answered (201 created vs 200 unchanged).
   * A 429 with Retry-After is waited out and sent again, the same request with the same headers;
   * so is a round without an answer, when the client has rounds to spare.
   */
  async exchange<T>(
    method: HttpMethod,
    path: string,
    body?: string | object,
    contentType?: string,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    let waitedOutMs = 0;
    for (let round = 1; ; round++) {
      this.signal?.throwIfAborted();
      try {
        return await this.exchangeOnce<T>(method, path, body, contentType, headers);
      } catch (err) {
        if (this.signal?.aborted) throw err;
        let waitMs: number;
        let why: string;
        if (err instanceof ApiError && err.retryAfterSeconds !== undefined && waitedOutMs < this.retryLaterForMs) {
          waitMs = Math.min(err.retryAfterSeconds * 1000, this.retryLaterForMs - waitedOutMs);
          waitedOutMs += waitMs;
          why = err.serverMessage;
        } else if (isNoAnswer(err, this.tryNextStatuses) && round < this.rounds) {
          waitMs = this.roundPauseMs;
          why = (err as Error).message;
        } else {
          throw err;
        }
        this.onRetry(why, waitMs);
        await delay(waitMs, this.signal);
        this.signal?.throwIfAborted();
      }
    }
  }

  private async exchangeOnce<T>(
    method: HttpMethod,
    path: string,
    body: string | object | undefined,
    contentType: string | undefined,
    headers: Record<string, string>,
  ): Promise<ApiResponse<T>> {
    const init = this.requestInit(method, body, contentType, headers);
    let lastRefusal: ApiError | undefined;
    const outcome = await askReplicas(this.replicas, async (server): Promise<Attempt<ApiResponse<T>>> => {
      let response: Response;
      let text: string;
      try {
        response = await this.fetch(server + path, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
        text = await response.text();
      } catch (err) {
        return { next: describeFetchFailure(err) };
      }
      if (response.ok) return { answer: { status: response.status, body: parseBody<T>(text), server } };
      const refusal = toApiError(response, text, server);
      if (!this.tryNextStatuses.has(response.status)) throw refusal;
      lastRefusal = refusal;
      return { next: refusal.message };
    });
    if ('answer' in outcome) return outcome.answer;
    throw lastRefusal ?? new UnreachableError(this.servers, outcome.failures.at(-1)?.why);
  }

  /**
   * A long-lived GET (a watch) from the first replica whose answer starts in time: its body, to
   * read until it ends or fails, which the caller resumes on whichever replica answers then.
   * `signal` ends it (and the wait for an answer).
   */
  async stream(path: string, signal: AbortSignal): Promise<{ body: ReadableStream<Uint8Array>; server: string }> {
    let lastRefusal: ApiError | undefined;
    const outcome = await askReplicas(this.replicas, async (server): Promise<Attempt<ReadableStream<Uint8Array>>> => {
      // The timeout covers the answer's start only: the body may rightly take hours.
      const started = new AbortController();
      const onAbort = () => started.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => started.abort(), this.timeoutMs);
      try {
        const response = await this.fetch(server + path, {
          ...this.requestInit('GET', undefined),
          signal: started.signal,
        });
        clearTimeout(timer);
        if (response.ok && response.body) return { answer: response.body };
        const refusal = toApiError(response, await response.text(), server);
        if (!this.tryNextStatuses.has(response.status)) throw refusal;
        lastRefusal = refusal;
        return { next: refusal.message };
      } catch (err) {
        clearTimeout(timer);
        if (err instanceof ApiError) throw err;
        if (signal.aborted) throw err;
        return { next: describeFetchFailure(err) };
      }
    });
    if ('answer' in outcome) return { body: outcome.answer, server: outcome.server };
    throw lastRefusal ?? new UnreachableError(this.servers, outcome.failures.at(-1)?.why);
  }

  private requestInit(
    method: HttpMethod,
    body: string | object | undefined,
    contentType?: string,
    extra: Record<string, string> = {},
  ): RequestInit {
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers, ...extra };
    if (body === undefined) return { method, headers };
    if (typeof body === 'string') {
      // Manifests are the only text bodies; JSON text is valid YAML too.
      headers['content-type'] = contentType ?? 'application/yaml';
      return { method, headers, body };
    }
    headers['content-type'] = contentType ?? 'application/json';
    return { method, headers, body: JSON.stringify(body) };
  }
}

/** The Authorization header of a bearer token (default FENCER_TOKEN), or none. */
export function bearer(token = process.env.FENCER_TOKEN): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** A base URL as the client uses it: with a scheme, without a trailing slash. */
export function normalizeServer(server: string): string {
  const withScheme = /^https?:\/\//.test(server) ? server : `http://${server}`;
  return withScheme.replace(/\/+$/, '');
}

/** No replica gave an answer: each failed or said "not me, not now". */
function isNoAnswer(err: unknown, tryNextStatuses: ReadonlySet<number>): boolean {
  return err instanceof UnreachableError || (err instanceof ApiError && tryNextStatuses.has(err.status));
}

function parseBody<T>(text: string): T {
  if (text.length === 0) return undefined as T;
  return JSON.parse(text) as T;
}

function toApiError(response: Response, text: string, server: string): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // A 401 or 403 is a Kubernetes Status on every route (src/api/auth-gate.ts).
  const status = parsed as { kind?: string; message?: string } | undefined;
  if (status?.kind === 'Status' && typeof status.message === 'string')
    return new ApiError(response.status, status.message, [], server);
  const error = (parsed as Partial<ErrorBody> | undefined)?.error;
  if (error && typeof error.message === 'string') {
    const details: ErrorDetail[] = Array.isArray(error.details) ? error.details : [];
    const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
    return new ApiError(
      response.status,
      error.message,
      details,
      server,
      response.status === 429 && retryAfter >= 0 ? retryAfter : undefined,
    );
  }
  // Not a fencer answer (a proxy page, a plain-text 502): say what we got.
  const summary = text.trim().slice(0, 200) || response.statusText || 'no body';
  return new ApiError(response.status, `HTTP ${response.status} from ${server}: ${summary}`, [], server);
}
