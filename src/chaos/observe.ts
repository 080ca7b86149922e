// What a campaign watches from the outside, in the database: leaders (lease), node deaths, and
// how long a dead node's jobs took to be running elsewhere.
import type pg from 'pg';
import { delay } from '../lifecycle.js';

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
    const row = (
      await db
        .query<LeaseRow>('SELECT holder, epoch, acquired_at FROM lease WHERE epoch > $1 AND holder IS NOT NULL', [
          epoch,
        ])
        .catch(() => ({ rows: [] as LeaseRow[] }))
    ).rows[0];
    if (row?.acquired_at) return row as LeaseRow & { acquired_at: Date };
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
            'SELECT name, state, dead_at, dead_reason FROM nodes',
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
  return (
    await db.query<{ uid: string }>("SELECT uid FROM jobs WHERE node = $1 AND phase IN ('Assigned', 'Running')", [node])
  ).rows.map((r) => r.uid);
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
      .query<{ n: number }>(
        "SELECT count(*)::int AS n FROM jobs WHERE uid = ANY($1) AND ((phase = 'Running' AND node <> $2) OR phase IN ('Succeeded', 'Failed', 'Cancelled', 'Dead'))",
        [jobs, node],
      )
      .catch(() => ({ rows: [{ n: -1 }] }));
    if (rows[0]!.n === jobs.length) return Date.now() - since;
    await delay(50);
  }
  return null;
}
