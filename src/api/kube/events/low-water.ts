// Reading an append-only table on as it grows, every committed row once, when its ids come from a
// sequence and no column says which transaction wrote a row (the history, the cluster events).
//
// The trap: a row's id is taken when the row is written, not when it commits. A reader that goes
// on from the highest id it has seen passes over a row whose transaction took a lower id and
// committed later:
//
//   A       id 7 ─────────────────────────────────────── COMMIT
//   B            id 8, COMMIT
//   reader                  reads id > 6: 8 │ goes on from 8: never reads 7
//
// So a reader keeps a low-water id: every row at or below it has committed or aborted, and the
// committed ones were streamed. It streams whatever it finds above the low-water, and remembers
// those ids so as not to stream them again. The low-water moves up to a bound once every
// transaction that could still write a row at or below that bound has ended:
//
//   1. read the sequence's last value V. A sequence is not transactional: ids that running
//      transactions took count.
//   2. then take a transaction id B, in a statement of its own that ends at once. A transaction
//      that took a row id <= V took it before step 1, and had its own xid before that (the rule
//      below), so its xid is < B.
//   3. at a later poll, once the oldest running xid (pg_snapshot_xmin) is >= B, all of them have
//      ended. The read that follows that check sees every committed row up to V: after it, the
//      low-water is V.
//
// Not pg_snapshot_xmax for B: it is one past the latest *completed* xid, not the next to be given
// out. A transaction that took its xid after the last one to complete, and still runs, is neither
// below it nor in the snapshot, so the oldest running xid can reach it while that transaction
// runs (test/integration/kube-events-low-water.test.ts shows the row it loses).
//
// The rule writers keep: a transaction has its xid before it takes a row id. The triggers that
// write history and cluster events run after the change that fires them, which took the xid; the
// one direct insert, a fenced rejection, takes it first (cluster_events/take_xid.sql).
//
// A transaction that stays open holds the low-water back (and a list's cut, feed.ts); meanwhile
// rows above it still stream, and the ids streamed pile up: the watch bounds them.
//
// This file is the bookkeeping, pure; feed.ts reads the ids, the xids and the rows.

/** A bound the low-water may move up to: a sequence's last id, and an xid taken after it was read. */
export interface Bound {
  lastId: number;
  barrier: bigint;
}

export interface LowWater {
  /** Every row at or below it has ended, and the committed ones were streamed. */
  low: number;
  /** Ids above `low` streamed already. */
  streamed: ReadonlySet<number>;
  /** Taken at an earlier poll; null when none is out. */
  bound: Bound | null;
}

/** What one poll read, in this order: the oldest running xid, then the rows. */
export interface Poll {
  /** Read before the rows; null when not read (no bound out). */
  oldestRunning: bigint | null;
  /** The ids read: above `low`, not among `streamed`, ascending. */
  ids: readonly number[];
  /** The read stopped at its limit: committed rows past its last id may not have been read yet. */
  full: boolean;
}

export function lowWaterAt(low: number): LowWater {
  return { low, streamed: new Set(), bound: null };
}

/** The ids to stream from a poll, and the low-water after it. */
export function afterPoll(state: LowWater, poll: Poll): { state: LowWater; fresh: number[] } {
  const fresh = poll.ids.filter((id) => id > state.low && !state.streamed.has(id));
  let { low, bound } = state;
  if (bound && poll.oldestRunning !== null && poll.oldestRunning >= bound.barrier) {
    // Every row up to lastId has ended, and this read came after that was known: it read all the
    // committed ones it had not streamed, unless it stopped at its limit first.
    const reach = poll.full ? Math.min(bound.lastId, poll.ids.at(-1)!) : bound.lastId;
    low = Math.max(low, reach);
    if (low >= bound.lastId) bound = null; // else still reached: the next poll reads on
  }
  const streamed = new Set([...state.streamed, ...fresh].filter((id) => id > low));
  return { state: { low, streamed, bound }, fresh };
}

/** Sets out a bound when none is out (steps 1 and 2 above, in that order). */
export function withBound(state: LowWater, bound: Bound): LowWater {
  return state.bound ? state : { ...state, bound };
}
