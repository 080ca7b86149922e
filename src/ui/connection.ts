// How the page talks to the replicas: every read goes to the replica that last answered, and on
// to the next one it knows when that one is dead or frozen (promise 4: any replica answers). It
// is told what changed over Server-Sent Events (/api/v1/changes) from any replica; when that
// channel fails or goes quiet, it polls, and keeps trying to open the channel again.
//
// Every request carries the page's bearer token (docs/security.md): given in the URL's fragment
// (`/ui/#token=...`, which no request sends and which the page then removes from the address
// bar), kept in this tab's session storage, sent as `Authorization: Bearer`, never as a cookie, so
// no other site's page can act with it. The push channel is read with fetch for that reason
// (EventSource sends no headers).
import type { ClusterStatus } from '../domain/resources.js';
import type { Change } from '../domain/change.js';
import { ReplicaList, askReplicas, describeFetchFailure, type Attempt } from '../net/any-replica.js';

export type Mode = 'connecting' | 'push' | 'polling';

/** A read that gets no answer in this time tries the next replica (a frozen one never answers). */
const READ_TIMEOUT_MS = 4_000;
/** While polling, everything is read again this often. */
export const POLL_MS = 2_000;
/** While polling, the push channel is tried again (on the next replica) this often. */
const PUSH_RETRY_MS = 5_000;
/**
 * The server pings every 5 s while it can read the cluster: a channel silent for longer (or one
 * that never said hello) stands on a frozen replica, or on one that lost its database.
 */
const QUIET_MS = 12_000;

export class Connection {
  /** Origins of the replicas, the one that answered last first. */
  private readonly replicas: ReplicaList;
  private source: AbortController | undefined;
  private heardAt = 0;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  mode: Mode = 'connecting';
  /** The replica the push channel is open on. */
  pushedBy = '';

  constructor(
    origin: string,
    private readonly onChange: (change: Change) => void,
    private readonly onMode: () => void,
  ) {
    this.replicas = new ReplicaList([origin]);
    setInterval(() => {
      if (this.source && Date.now() - this.heardAt > QUIET_MS) this.fallBack();
    }, 2_000);
  }

  /** The replica reads go to now. */
  get base(): string {
    return this.replicas.first;
  }

  /** GET a path of the REST API from the first replica that answers. */
  async get<T>(path: string): Promise<T> {
    const outcome = await askReplicas(this.replicas, async (base): Promise<Attempt<T>> => {
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, { headers: authorization(), signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
        const message = async () => {
          const body = (await res.json().catch(() => ({}))) as { error?: { message?: string }; message?: string };
          return `${base}${path}: ${res.status} ${body.error?.message ?? body.message ?? ''}`;
        };
        // A replica in trouble (no database, overloaded) answers 5xx: another may not be.
        if (res.status >= 500) return { next: await message() };
        if (!res.ok) throw new ReadError(res.status, await message()); // another would say the same
        return { answer: (await res.json()) as T };
      } catch (err) {
        if (err instanceof ReadError) throw err;
        return { next: describeFetchFailure(err) };
      }
    });
    if ('answer' in outcome) return outcome.answer;
    throw new Error(`no replica answered ${path}: ${outcome.failures.at(-1)?.why ?? ''}`);
  }

  /** Learns the replicas the cluster lists, live ones first, keeping the one that answers first. */
  learn(status: ClusterStatus): void {
    this.replicas.learn(
      [...status.replicas].sort((a, b) => Number(b.alive) - Number(a.alive)).map((r) => new URL(r.url).origin),
    );
  }

  /** Opens the push channel on the replica reads go to. */
  connect(): void {
    clearTimeout(this.retryTimer);
    this.source?.abort();
    const base = this.base;
    const source = new AbortController();
    this.source = source;
    this.heardAt = Date.now(); // from now, QUIET_MS to say hello
    const on: Record<string, (data: string) => void> = {
      hello: (data) => {
        this.heardAt = Date.now();
        this.pushedBy = (JSON.parse(data) as { replica: string }).replica;
        clearInterval(this.pollTimer);
        this.pollTimer = undefined;
        this.setMode('push');
        // Whatever changed while the channel was down: read everything once.
        this.onChange({ kinds: [], status: true, events: true, all: true });
      },
      change: (data) => {
        this.heardAt = Date.now();
        this.onChange(JSON.parse(data) as Change);
      },
      ping: () => (this.heardAt = Date.now()),
    };
    readEvents(`${base}/api/v1/changes`, source.signal, (event, data) => on[event]?.(data)).catch(() => {
      if (this.source === source) this.fallBack();
    });
  }

  private fallBack(): void {
    this.source?.abort();
    this.source = undefined;
    this.pushedBy = '';
    this.setMode('polling');
    this.pollTimer ??= setInterval(() => this.onChange({ kinds: [], status: true, events: true, all: true }), POLL_MS);
    this.onChange({ kinds: [], status: true, events: true, all: true });
    // Next time, the push channel is tried on another replica.
    this.replicas.demoteFirst();
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), PUSH_RETRY_MS);
  }

  private setMode(mode: Mode): void {
    this.mode = mode;
    this.onMode();
  }
}

/** The replica answered with a client error (404, 400): asking another would not help. */
export class ReadError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'fencer.token';

/** The page's token: from the URL's fragment (then removed from the address bar), else this tab's session storage. */
export function pageToken(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]!));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

function authorization(): Record<string, string> {
  const token = pageToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/**
 * Reads a Server-Sent Events stream with fetch (and so with the page's token), calling `on` for
 * each event; resolves never, rejects when the stream fails, ends or is refused.
 */
async function readEvents(url: string, signal: AbortSignal, on: (event: string, data: string) => void): Promise<never> {
  const res = await fetch(url, { headers: { ...authorization(), accept: 'text/event-stream' }, signal });
  if (!res.ok || !res.body) throw new Error(`${url}: ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${url}: the stream ended`);
    buffered += value;
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) on(event, data.join('\n'));
    }
  }
}
