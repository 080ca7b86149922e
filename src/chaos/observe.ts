// What a campaign watches from the outside, in the database: leaders (lease), node deaths, and
// how long a dead node's jobs took to be running elsewhere.
import type pg from 'pg';
import { delay } from '../lifecycle.js';
import { readLease } from '../lease/lease.js';
import { sql } from '../store/sql.js';

export interface LeaseRow {
  holder: string | null;
  epoch: number;
  acquired_at: Date | null;
}

/** Waits for a lease epoch above `epoch` with a holder; returns it. */
export async function nextLeader(
  db: pg.Pool,
  epoch: number,
  timeoutMs = 30_000,
): Promise<LeaseRow & { acquired_at: Date }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await readLease(db).catch(() => undefined);
    if (row && row.epoch > epoch && row.holder !== null && row.acquired_at)
      return row as LeaseRow & { acquired_at: Date };
    if (Date.now() > deadline) throw new Error(`no leader above epoch ${epoch} within ${timeoutMs} ms`);
    await delay(10);
  }
}

/** Records every node that turns Dead, with when the campaign saw it. */
export class NodeDeaths {
  readonly deaths: Array<{ node: string; at: number; reason: string | null }> = [];
  private readonly dead = new Set<string>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly db: pg.Pool) {}

  start(): void {
    this.running ??= (async () => {
      while (!this.stopped) {
        const rows = await this.db
          .query<{ name: string; state: string; dead_at: Date | null; dead_reason: string | null }>(
            sql('agent-protocol/node_list'),
            [null, null],
          )
          .then(
            (r) => r.rows,
            () => [],
          );
        for (const row of rows) {
          if (row.state === 'Dead' && !this.dead.has(row.name)) {
            this.dead.add(row.name);
            this.deaths.push({ node: row.name, at: row.dead_at?.getTime() ?? Date.now(), reason: row.dead_reason });
          } else if (row.state === 'Ready') {
            this.dead.delete(row.name);
          }
        }
        await delay(100);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}

/** The jobs a node holds right now (to follow them after the node dies). */
export async function jobsOnNode(db: pg.Pool, node: string): Promise<string[]> {
  return (await db.query<{ uid: string }>(sql('chaos/jobs_on_node'), [node])).rows.map((r) => r.uid);
}

/**
 * Milliseconds from `since` until every one of `jobs` runs on another node than `node` (or has
 * finished). Null when that did not happen within the timeout.
 */
export async function timeUntilRunningElsewhere(
  db: pg.Pool,
  node: string,
  jobs: string[],
  since: number,
  timeoutMs = 60_000,
): Promise<number | null> {
  if (jobs.length === 0) return null;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await db
      .query<{ n: number }>(sql('chaos/settled_elsewhere'), [jobs, node])
      .catch(() => ({ rows: [{ n: -1 }] }));
    if (rows[0]!.n === jobs.length) return Date.now() - since;
    await delay(50);
  }
  return null;
}
