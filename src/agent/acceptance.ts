// Which assignments a node agrees to run. Pure: plain data in, decisions out, no I/O and no
// clock, so the two node-side guards of docs/architecture.md, promise 1 (the assignment's epoch is
// at least the newest the node has seen; its id was not seen before) can be tested as tables.
//
// The guards are the node's own fence against a control plane that got it wrong (a deposed
// leader's placement, a replayed snapshot): the control plane has its own fences, these are
// the last ones, and they cost nothing.

import type { AssignmentMessage } from '../agent-protocol/messages.js';

/** What the node remembers about every assignment it was ever offered (since it started). */
export interface AcceptanceMemory {
  /** The newest epoch carried by any assignment offered so far (0 before the first). */
  newestEpoch: number;
  /** Every assignment id offered so far, whatever became of it. */
  seen: Set<string>;
}

export type AcceptanceDecision = 'run' | 'reject-stale-epoch' | 'ignore-duplicate';

/** The test-only switches of src/testing/broken-guards.ts, passed in so this module stays pure. */
export interface AcceptanceOptions {
  /** isBroken('node-epoch-check'): run assignments from an older epoch. */
  epochCheckBroken?: boolean;
  /** isBroken('node-dedupe'): run an assignment id already seen. */
  dedupeBroken?: boolean;
}

export function newAcceptanceMemory(): AcceptanceMemory {
  return { newestEpoch: 0, seen: new Set() };
}

/**
 * Decides what to do with one offered assignment and records it in `memory` (which it
 * mutates: the memory is the node's, and every offer is part of it).
 *
 * The duplicate check comes first: a running assignment is listed again in every snapshot,
 * and once a newer epoch is seen elsewhere it would otherwise be "rejected" on every one.
 * A rejected or ignored assignment is remembered too, so it is decided once, not per snapshot.
 */
export function acceptAssignment(
  memory: AcceptanceMemory,
  assignment: Pick<AssignmentMessage, 'id' | 'epoch'>,
  options: AcceptanceOptions = {},
): AcceptanceDecision {
  const duplicate = memory.seen.has(assignment.id);
  const stale = assignment.epoch < memory.newestEpoch;
  memory.seen.add(assignment.id);
  memory.newestEpoch = Math.max(memory.newestEpoch, assignment.epoch);
  if (duplicate && !options.dedupeBroken) return 'ignore-duplicate';
  if (stale && !options.epochCheckBroken) return 'reject-stale-epoch';
  return 'run';
}

/** What the agent does with one snapshot of its active assignments. */
export interface SnapshotPlan {
  start: AssignmentMessage[];
  reject: AssignmentMessage[];
  /** Ids running locally that the snapshot no longer lists: withdrawn by the control plane. */
  withdraw: string[];
}

/**
 * Plans one snapshot against what runs locally. Assignments are considered oldest epoch
 * first: every one of them is active in the database right now, so one placed by the
 * previous leader and still valid must not be rejected only because the list happened to
 * name a newer one before it.
 *
 * An id already running locally (or listed twice) is never started a second time, even with
 * dedupe broken: that would be one run twice in the same process, not the rerun of a stopped
 * assignment that the switch is there to show.
 */
export function planSnapshot(
  memory: AcceptanceMemory,
  running: ReadonlySet<string>,
  assignments: readonly AssignmentMessage[],
  options: AcceptanceOptions = {},
): SnapshotPlan {
  const plan: SnapshotPlan = { start: [], reject: [], withdraw: [] };
  const listed = new Set(assignments.map((a) => a.id));
  for (const id of running) if (!listed.has(id)) plan.withdraw.push(id);
  const oldestFirst = [...assignments].sort((a, b) => a.epoch - b.epoch);
  const busy = new Set(running);
  for (const assignment of oldestFirst) {
    const decision = acceptAssignment(memory, assignment, options);
    if (busy.has(assignment.id)) continue; // remembered as seen all the same
    if (decision === 'run') {
      plan.start.push(assignment);
      busy.add(assignment.id);
    } else if (decision === 'reject-stale-epoch') {
      plan.reject.push(assignment);
    }
  }
  return plan;
}
