// Nodes as tests speak for them (docs/security.md, Node identity): a join token stored in the
// test's database, a registration with it, and the credential the registration answered for
// every heartbeat, watch and report of that node afterwards.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/store/db.js';
import { createJoinToken } from '../../src/agent-protocol/nodes-store.js';
import { NODE_ROUTES } from '../../src/agent-protocol/routes.js';

/** A join token valid for an hour in this database. */
export async function testJoinToken(db: Db, ttlMs = 3_600_000): Promise<string> {
  return (await createJoinToken(db, ttlMs, 'test')).token;
}

export class TestNodes {
  private joinToken: Promise<string> | undefined;
  private readonly incarnations = new Map<string, string>();
  /** Each node's credential, as its last registration or heartbeat answered it. */
  readonly credentials = new Map<string, string>();

  constructor(
    private readonly url: () => string,
    private readonly db: Db,
  ) {}

  /**
   * Registers `body.name` with the join token (an incarnation per name unless the body has one),
   * keeping the credential it is answered.
   */
  async register(body: Record<string, unknown>, init: RequestInit = {}): Promise<Response> {
    this.joinToken ??= testJoinToken(this.db);
    const name = String(body.name);
    if (!this.incarnations.has(name)) this.incarnations.set(name, randomUUID());
    const res = await fetch(this.url() + NODE_ROUTES.register.path(), {
      ...init,
      method: 'POST',
      body: JSON.stringify({ incarnation: this.incarnations.get(name), ...body }),
      headers: {
        authorization: `Bearer ${await this.joinToken}`,
        'content-type': 'application/json',
        ...(init.headers as Record<string, string> | undefined),
      },
    });
    if (res.ok) {
      const answer = (await res.clone().json()) as { credential?: string };
      if (answer.credential) this.credentials.set(name, answer.credential);
    }
    return res;
  }

  /** A request of node `name`'s protocol, with its credential. */
  fetch(name: string, path: string, init: RequestInit = {}): Promise<Response> {
    const credential = this.credentials.get(name);
    return fetch(this.url() + path, {
      ...init,
      headers: {
        ...(credential ? { authorization: `Bearer ${credential}` } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.headers as Record<string, string> | undefined),
      },
    });
  }

  heartbeat(name: string): Promise<Response> {
    return this.fetch(name, NODE_ROUTES.heartbeat.path(name), { method: 'POST', body: '{}' });
  }
}
