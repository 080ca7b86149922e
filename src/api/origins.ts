// Which names and web pages may reach this API: the replicas' own. A dashboard served by one
// replica reads from the others when that one dies; any other site an operator has open must not
// read or write the cluster through the operator's browser, and a name that is not the cluster's
// (DNS rebinding: an attacker's name resolving to a replica) is refused (src/api/edge/browser.ts).
import { isIP } from 'node:net';
import type { Db } from '../store/db.js';
import { sql } from '../store/sql.js';

/** The replicas' list is read again at most this often. */
const READ_EVERY_MS = 5_000;

export interface OriginOptions {
  /** Names the replicas are reached by besides their advertised URLs' (a Service, a proxy). */
  allowedHosts?: readonly string[];
  /** The address the replica listens on: loopback names are allowed when it serves loopback. */
  listenHost?: string;
}

export class ReplicaOrigins {
  private origins = new Set<string>();
  private hosts = new Set<string>();
  private readAt = 0;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    ownUrl: string,
    options: OriginOptions = {},
  ) {
    this.add(ownUrl);
    for (const name of options.allowedHosts ?? []) this.hosts.add(normalHost(name));
    if (options.listenHost === undefined || servesLoopback(options.listenHost))
      for (const name of LOOPBACK_NAMES) this.hosts.add(name);
  }

  /** Whether a page from `origin` may read answers. */
  async allows(origin: string): Promise<boolean> {
    if (this.origins.has(origin)) return true;
    await this.readIfStale();
    return this.origins.has(origin);
  }

  /**
   * Whether a request's Host header names this cluster: an IP address (a rebinding needs a name
   * the attacker controls), a replica's advertised name, an allowed name, or a loopback name on a
   * loopback listener. No Host at all (HTTP/1.0) is no browser's.
   */
  async allowsHost(header: string | undefined): Promise<boolean> {
    if (header === undefined || header === '') return true;
    const host = hostnameOf(header);
    if (isIP(host) !== 0 || this.hosts.has(host)) return true;
    await this.readIfStale();
    return this.hosts.has(host);
  }

  private async readIfStale(): Promise<void> {
    if (Date.now() - this.readAt <= READ_EVERY_MS) return;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    await this.reading;
  }

  private async read(): Promise<void> {
    const { rows } = await this.db.query<{ url: string }>(sql('replicas/list'), [0]);
    for (const { url } of rows) this.add(url);
    this.readAt = Date.now();
  }

  private add(url: string): void {
    this.origins.add(originOf(url));
    try {
      this.hosts.add(normalHost(new URL(url).hostname));
    } catch {
      // not a URL: no name to add
    }
  }
}

const LOOPBACK_NAMES = ['localhost', 'localhost.localdomain', 'ip6-localhost'];

function servesLoopback(listenHost: string): boolean {
  return (
    ['localhost', '::1', '[::1]', '0.0.0.0', '::', '[::]', ''].includes(listenHost) ||
    /^127(\.\d{1,3}){3}$/.test(listenHost)
  );
}

/** A Host header's name: without its port or IPv6 brackets, lowercase, no trailing dot. */
export function hostnameOf(header: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(header);
  const name = bracketed ? bracketed[1]! : header.replace(/:\d*$/, '');
  return normalHost(name);
}

function normalHost(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
