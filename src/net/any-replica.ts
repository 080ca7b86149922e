// Any replica serves the API (docs/architecture.md, promise 4), so a client asks the one that answered last and
// moves on to the next when that one is dead, frozen (only a timeout tells) or says "not me, not
// now". The one way to do that: src/net/api-client.ts builds on it for the CLI, the simulator,
// the benchmarks and chaos, and the dashboard uses it directly. This module is pure (fetch and
// URLs only), so the browser loads it as it is. (The agents' client, src/agent/replica-client.ts,
// is another thing: it hedges, keeps connections alive and never runs in a browser.)

/** The replicas in the order to ask them: the one that answered last first. */
export class ReplicaList {
  private order: string[];

  constructor(servers: readonly string[]) {
    if (servers.length === 0) throw new Error('no fencer server given');
    this.order = [...new Set(servers)];
  }

  get first(): string {
    return this.order[0]!;
  }

  get all(): readonly string[] {
    return this.order;
  }

  /** This one answered: ask it first from now on. */
  prefer(server: string): void {
    if (this.first !== server) this.order = [server, ...this.order.filter((s) => s !== server)];
  }

  /** The first one failed outside a request (a stream went quiet): the next one goes first. */
  demoteFirst(): void {
    this.order.push(this.order.shift()!);
  }

  /** Replicas the cluster listed, asked after the first (which keeps its place). */
  learn(servers: readonly string[]): void {
    this.order = [...new Set([this.first, ...servers, ...this.order])];
  }
}

/** What asking one replica came to: an answer, or why the next one should be asked. */
export type Attempt<T> = { answer: T } | { next: string };

/**
 * Asks each replica once, in order, until one answers; that one goes first next time. `ask`
 * throws for an answer every replica would repeat (a 4xx): that ends the round. Returns the
 * answer, or why each replica could not give one.
 */
export async function askReplicas<T>(
  replicas: ReplicaList,
  ask: (server: string) => Promise<Attempt<T>>,
): Promise<{ answer: T; server: string } | { failures: Array<{ server: string; why: string }> }> {
  const failures: Array<{ server: string; why: string }> = [];
  for (const server of [...replicas.all]) {
    const attempt = await ask(server);
    if ('answer' in attempt) {
      replicas.prefer(server);
      return { answer: attempt.answer, server };
    }
    failures.push({ server, why: attempt.next });
  }
  return { failures };
}

/** Why a fetch failed, briefly (a timeout, ECONNREFUSED, ...). */
export function describeFetchFailure(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? err.message;
  }
  return String(err);
}
