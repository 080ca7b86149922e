// The leader's pending jobs, kept between placement rounds. A round used to read the oldest
// thousands of every queue lane again (most of its time with a long backlog); now it reads the
// jobs a NOTIFY fencer_pending named since the last round (migrations 0015, 0026, 0027: a trigger
// names every job whose place among the pending ones changed, and those that left) and picks from memory what
// placement/pending.sql would have returned.
//
// Trust rests on the LISTEN connection: notifications sent while it was down are lost, so the
// set is read whole again whenever the connection is not the one it was read under (and every
// RELOAD_MS as a safety net). A job named while the set was being read is read again next
// round, which is harmless: each read takes the job's row as it is then. The set being behind
// never costs safety, only a round's room: the commit claims only jobs still Pending and due.
import type { Db } from '../store/db.js';
import type { Listener } from '../store/listener.js';
import { sql } from '../store/sql.js';
import type { PendingJob } from './best-fit.js';
import { pendingJobOf, type PendingRow } from './store.js';
import { isBroken } from '../testing/broken-guards.js';

/** The node selector of every job that has none. */
const NO_SELECTOR: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Read whole again this often even when no notification was lost. */
const RELOAD_MS = 60_000;
/** More named jobs than this waiting to be read: read everything instead (and bound memory on standbys). */
const MOST_CHANGED = 50_000;

/** A pending row with what the set filters and orders by itself (times in epoch ms). */
interface PendingSetRow extends PendingRow {
  waiting: boolean;
  due_ms: number;
  created_ms: number;
  db_now_ms: number;
}

interface Entry {
  job: PendingJob;
  lane: LaneJobs;
  waiting: boolean;
  dueMs: number;
  createdMs: number;
}

/** A queue lane's jobs in arrival order (created_at, uid), as pending.sql orders them. */
interface LaneJobs {
  /** Its queue, `namespace/name`. */
  queue: string;
  entries: Entry[];
  sorted: boolean;
  /** Entries no longer in the set but still in `entries`. */
  stale: number;
}

/** Which jobs could be placed now (placement/pending.sql's room test). */
export interface RoomTest {
  freeCpu: number;
  freeMemory: number;
  capacityCpu: number;
  capacityMemory: number;
}

export interface Selection {
  jobs: PendingJob[];
  /** Some lane filled its slice: more jobs wait behind it. */
  full: boolean;
}

export class PendingSet {
  private readonly entries = new Map<string, Entry>();
  private readonly lanes = new Map<string, LaneJobs>();
  /**
   * One copy of each namespace, image and pool name: a driver row's strings are its own,
   * and a backlog of 100,000 jobs would otherwise hold each name 100,000 times (leader RSS).
   */
  private readonly names = new Map<string, string>();
  private changed = new Set<string>();
  /** Times `changed` overflowed: one during a full read means that read missed what was dropped. */
  private overflows = 0;
  private readUnder: number | null = null;
  /** A read of the database is under way: what it returns may be older than a notification heard meanwhile. */
  private reading = false;
  private readAt = -Infinity;
  private dbNowMs = 0;

  /** `listening`: the LISTEN connection's number, null while there is none (the listener's). */
  constructor(
    private readonly listening: () => number | null,
    private readonly mostChanged = MOST_CHANGED,
  ) {}

  /** A NOTIFY fencer_pending named this job. */
  named(uid: string): void {
    if (this.changed.size >= this.mostChanged) {
      this.readUnder = null;
      this.overflows++;
      this.changed.clear();
      return;
    }
    this.changed.add(uid);
  }

  /** A NOTIFY fencer_pending said this job left the pending ones. */
  left(uid: string): void {
    this.drop(uid);
    // A read under way may have seen the job still pending and would put it back: read it again.
    // Broken on purpose (src/testing/broken-guards.ts, pending-left-reread): it stays in, stale.
    if (this.reading && !isBroken('pending-left-reread')) this.named(uid);
  }

  /**
   * Brings the set up to date. False when it cannot be trusted (no LISTEN connection): the
   * round reads from the database instead.
   */
  async sync(db: Db): Promise<boolean> {
    this.reading = true;
    try {
      return await this.read(db);
    } finally {
      this.reading = false;
    }
  }

  private async read(db: Db): Promise<boolean> {
    const connection = this.listening();
    if (connection === null) return false;
    const stale = connection !== this.readUnder && !isBroken('pending-set-reread');
    if (stale || this.readUnder === null || performance.now() - this.readAt > RELOAD_MS) {
      this.changed.clear(); // before the read: a job named from here on is read again next round
      const overflows = this.overflows;
      const rows = (await db.query<PendingSetRow>(sql('placement/pending_all'))).rows;
      this.entries.clear();
      this.lanes.clear();
      this.names.clear();
      for (const row of rows) this.put(row);
      this.dbNowMs = rows[0]?.db_now_ms ?? (await this.clock(db));
      // Names dropped while the read ran may be of jobs it did not see: read everything again next round.
      this.readUnder = this.overflows === overflows ? connection : null;
      this.readAt = performance.now();
      return true;
    }
    // Nothing named and nothing held: no read (the clock matters only to jobs held).
    if (this.changed.size === 0 && this.entries.size === 0) return true;
    const uids = [...this.changed];
    this.changed = new Set();
    const rows = (await db.query<PendingSetRow>(sql('placement/pending_changed'), [uids])).rows;
    this.dbNowMs = rows[0]!.db_now_ms;
    for (const uid of uids) this.drop(uid);
    for (const row of rows) if (row.uid !== null) this.put(row);
    return true;
  }

  /** Jobs the round placed (or found no longer pending): out of the set before their notification comes. */
  removed(uids: Iterable<string>): void {
    for (const uid of uids) this.drop(uid);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Some job may be waiting to be placed: the set is not trusted (or due to be read whole again),
   * holds jobs, or jobs were named since it was read.
   */
  mayHaveWaiting(): boolean {
    return (
      this.readUnder === null ||
      this.readUnder !== this.listening() ||
      performance.now() - this.readAt > RELOAD_MS ||
      this.entries.size > 0 ||
      this.changed.size > 0
    );
  }

  /**
   * What placement/pending.sql returns: of each lane of a queue in `queues` (`namespace/name`)
   * with a job due and not waiting, the
   * oldest such jobs that could fit now (or nowhere ever), `limit` split over those lanes but at
   * least `leastSlice` each; all in arrival order.
   */
  select(limit: number, leastSlice: number, room: RoomTest, queues: ReadonlySet<string>): Selection {
    const ready: LaneJobs[] = [];
    for (const [key, lane] of this.lanes) {
      if (lane.entries.length === lane.stale) {
        this.lanes.delete(key); // nothing live in it: forget its dropped entries
        continue;
      }
      // As pending.sql, only the lanes of queues that exist (a job replayed into a deleted queue waits).
      if (!queues.has(lane.queue)) continue;
      this.tidy(lane);
      if (lane.entries.some((e) => this.isDue(e))) ready.push(lane);
    }
    const slice = Math.max(leastSlice, Math.floor(limit / Math.max(1, ready.length)));
    const taken: Entry[][] = [];
    for (const lane of ready) {
      const picked: Entry[] = [];
      for (const e of lane.entries) {
        if (picked.length >= slice) break;
        if (this.isDue(e) && fits(e.job, room)) picked.push(e);
      }
      if (picked.length > 0) taken.push(picked);
    }
    // As readPlacementInput judges it: the slice the lanes that gave jobs would each have had.
    const given = Math.max(leastSlice, Math.floor(limit / Math.max(1, taken.length)));
    return { jobs: mergeByArrival(taken).map((e) => e.job), full: taken.some((t) => t.length >= given) };
  }

  private isDue(e: Entry): boolean {
    return !e.waiting && e.dueMs <= this.dbNowMs && this.entries.get(e.job.uid) === e;
  }

  private put(row: PendingSetRow): void {
    const key = `${row.namespace}/${row.queue}/${row.lane}`;
    let lane = this.lanes.get(key);
    if (!lane)
      this.lanes.set(key, (lane = { queue: `${row.namespace}/${row.queue}`, entries: [], sorted: true, stale: 0 }));
    const job = pendingJobOf(row);
    job.namespace = this.name(row.namespace);
    job.queue = lane.queue;
    job.image = row.image === null ? null : this.name(row.image);
    job.pool = row.pool === null ? null : this.name(row.pool);
    if (Object.keys(job.nodeSelector).length === 0) job.nodeSelector = NO_SELECTOR;
    const entry: Entry = { job, lane, waiting: row.waiting, dueMs: row.due_ms, createdMs: row.created_ms };
    this.drop(row.uid);
    this.entries.set(row.uid, entry);
    const last = lane.entries.at(-1);
    if (last && compareArrival(last, entry) > 0) lane.sorted = false;
    lane.entries.push(entry);
  }

  private drop(uid: string): void {
    const entry = this.entries.get(uid);
    if (!entry) return;
    this.entries.delete(uid);
    entry.lane.stale++; // a lane forgotten meanwhile (all stale) is no one's: counting there is harmless
  }

  private name(s: string): string {
    const known = this.names.get(s);
    if (known !== undefined) return known;
    this.names.set(s, s);
    return s;
  }

  /** Sorts a lane that took a job out of order, and forgets its dropped entries once they are many. */
  private tidy(lane: LaneJobs): void {
    if (lane.stale >= 512 && lane.stale * 4 >= lane.entries.length) {
      lane.entries = lane.entries.filter((e) => this.entries.get(e.job.uid) === e);
      lane.stale = 0;
    }
    if (!lane.sorted) {
      lane.entries.sort(compareArrival);
      lane.sorted = true;
    }
  }

  private async clock(db: Db): Promise<number> {
    return (await db.query<PendingSetRow>(sql('placement/pending_changed'), [[]])).rows[0]!.db_now_ms;
  }
}

/**
 * Feeds the set from the listener, as the leader does: a job now pending is named (and `wake` is
 * called: placement has work); one that left the pending ones only leaves the set, since no
 * round is needed for it (most often it was placed by this very leader).
 */
export function followPending(set: PendingSet, listener: Pick<Listener, 'on'>, wake: () => void): void {
  listener.on('pending', (uids) => {
    for (const uid of uids) set.named(uid);
    wake();
  });
  listener.on('left', (uids) => {
    for (const uid of uids) set.left(uid);
  });
}

function compareArrival(a: Entry, b: Entry): number {
  return a.createdMs - b.createdMs || (a.job.uid < b.job.uid ? -1 : a.job.uid > b.job.uid ? 1 : 0);
}

/** pending.sql's room test: fits the node with the most free CPU and the most free memory, or no node ever. */
function fits(job: PendingJob, room: RoomTest): boolean {
  return (
    (job.cpuMillis <= room.freeCpu && job.memoryBytes <= room.freeMemory) ||
    job.cpuMillis > room.capacityCpu ||
    job.memoryBytes > room.capacityMemory
  );
}

/** The lanes' slices (each in arrival order) as one list in arrival order. */
function mergeByArrival(lists: Entry[][]): Entry[] {
  if (lists.length <= 1) return lists[0] ?? [];
  const heads = lists.map(() => 0);
  const merged: Entry[] = [];
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const e = lists[i]![heads[i]!];
      if (e && (best < 0 || compareArrival(e, lists[best]![heads[best]!]!) < 0)) best = i;
    }
    if (best < 0) return merged;
    merged.push(lists[best]![heads[best]!++]!);
  }
}
