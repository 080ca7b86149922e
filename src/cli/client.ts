// The CLI's HTTP client. Any replica serves the API (docs/architecture.md, promise 4), so a replica that
// is dead, frozen or partitioned away is simply skipped: the next one answers the same.
import { userInfo } from 'node:os';
import type { ErrorBody } from '../domain/resources.js';
import { readClusterState } from '../simulator/state.js';
import { ApiError, type ErrorDetail } from './errors/api-error.js';
import { UnreachableError } from './errors/unreachable-error.js';
import { delay } from '../lifecycle.js';
import { ReplicaList, askReplicas, describeFetchFailure, type Attempt } from '../net/any-replica.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:7070';

// A frozen replica (SIGSTOP) still accepts TCP connections through the kernel backlog but
// never answers, so only a timeout tells it apart from a slow one.
const DEFAULT_TIMEOUT_MS = 2000;

// These say "not me, not now" (a proxy without a backend, a replica cut off from PostgreSQL):
// another replica may well succeed, unlike a 4xx, which every replica would repeat.
const TRY_NEXT_STATUSES = new Set([502, 503, 504]);

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiResponse<T> {
  status: number;
  body: T;
  server: string;
}

export interface ApiClientOptions {
  timeoutMs?: number;
  /**
   * How long in all to wait out 429s with Retry-After (a full backlog, a quota) before giving up
   * (default 5 min). Safe for writes: a named object sent again is unchanged, and a generated
   * name is sent with an Idempotency-Key.
   */
  retryLaterForMs?: number;
}

const RETRY_LATER_FOR_MS = 5 * 60_000;

export class ApiClient {
  readonly servers: string[];
  private readonly timeoutMs: number;
  private readonly retryLaterForMs: number;
  // Start where the last request succeeded, so a multi-document apply pays the timeout of a
  // dead replica once rather than once per document.
  private readonly replicas: ReplicaList;

  constructor(servers: string[], options: ApiClientOptions = {}) {
    if (servers.length === 0) throw new Error('no fencer server given');
    this.servers = servers.map(normalizeServer);
    this.replicas = new ReplicaList(this.servers);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retryLaterForMs = options.retryLaterForMs ?? RETRY_LATER_FOR_MS;
  }

  async request<T>(method: HttpMethod, path: string, body?: string | object, contentType?: string): Promise<T> {
    return (await this.exchange<T>(method, path, body, contentType)).body;
  }

  /**
   * Like request, but also says which status the server answered (201 created vs 200 unchanged).
   * A 429 with Retry-After is waited out and sent again, the same request with the same headers.
   */
  async exchange<T>(
    method: HttpMethod,
    path: string,
    body?: string | object,
    contentType?: string,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    for (let waitedMs = 0; ;) {
      try {
        return await this.exchangeOnce<T>(method, path, body, contentType, headers);
      } catch (err) {
        if (!(err instanceof ApiError) || err.retryAfterSeconds === undefined || waitedMs >= this.retryLaterForMs)
          throw err;
        const waitMs = Math.min(err.retryAfterSeconds * 1000, this.retryLaterForMs - waitedMs);
        process.stderr.write(`${err.serverMessage} (waiting ${Math.ceil(waitMs / 1000)} s, as the server asked)\n`);
        await delay(waitMs);
        waitedMs += waitMs;
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
    const init = requestInit(method, body, contentType, headers);
    let lastRefusal: ApiError | undefined;
    const outcome = await askReplicas(this.replicas, async (server): Promise<Attempt<ApiResponse<T>>> => {
      let response: Response;
      let text: string;
      try {
        response = await fetch(server + path, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
        text = await response.text();
      } catch (err) {
        return { next: describeFetchFailure(err) };
      }
      if (response.ok) return { answer: { status: response.status, body: parseBody<T>(text), server } };
      const refusal = toApiError(response, text, server);
      if (!TRY_NEXT_STATUSES.has(response.status)) throw refusal;
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
        const response = await fetch(server + path, { ...requestInit('GET', undefined), signal: started.signal });
        clearTimeout(timer);
        if (response.ok && response.body) return { answer: response.body };
        const refusal = toApiError(response, await response.text(), server);
        if (!TRY_NEXT_STATUSES.has(response.status)) throw refusal;
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
}

/**
 * The replicas a command talks to: --server, else FENCER_SERVER, else the kubeconfig kubectl would
 * read when its current context is fencer's (`fencer kubeconfig`), else the local cluster's, else
 * the default.
 */
export async function serversFor(opt?: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  if (splitServers(opt).length === 0 && splitServers(env.FENCER_SERVER).length === 0) {
    const { kubeconfigFile, serversFromKubeconfig } = await import('./kubeconfig.js');
    const file = kubeconfigFile(env);
    const servers = file ? serversFromKubeconfig(file).map(normalizeServer) : [];
    if (servers.length > 0) return servers;
  }
  return resolveServers(opt, env);
}

export function resolveServers(
  opt?: string,
  env: NodeJS.ProcessEnv = process.env,
  clusterReplicas: () => string[] = localClusterReplicas,
): string[] {
  for (const candidate of [opt, env.FENCER_SERVER]) {
    const servers = splitServers(candidate);
    if (servers.length > 0) return servers;
  }
  const replicas = clusterReplicas().map(normalizeServer);
  return replicas.length > 0 ? replicas : [DEFAULT_SERVER];
}

function localClusterReplicas(): string[] {
  try {
    return readClusterState()?.replicas.map((r) => r.url) ?? [];
  } catch {
    // A half-written or stale state file must not stop a command that names no server:
    // the default still has a chance to answer.
    return [];
  }
}

function splitServers(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(normalizeServer);
}

function normalizeServer(server: string): string {
  const withScheme = /^https?:\/\//.test(server) ? server : `http://${server}`;
  return withScheme.replace(/\/+$/, '');
}

/** Who the user is, for the history of what they ask (a replay, a retry): FENCER_USER, else the login name. */
function actor(): string {
  if (process.env.FENCER_USER) return process.env.FENCER_USER;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

function requestInit(
  method: HttpMethod,
  body: string | object | undefined,
  contentType?: string,
  extra: Record<string, string> = {},
): RequestInit {
  const headers: Record<string, string> = { accept: 'application/json', 'x-remote-user': actor(), ...extra };
  if (body === undefined) return { method, headers };
  if (typeof body === 'string') {
    // Manifests are the only text bodies; JSON text is valid YAML too.
    headers['content-type'] = contentType ?? 'application/yaml';
    return { method, headers, body };
  }
  headers['content-type'] = contentType ?? 'application/json';
  return { method, headers, body: JSON.stringify(body) };
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
