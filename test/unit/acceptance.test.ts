import { describe, expect, it } from 'vitest';
import type { AssignmentMessage } from '../../src/agent-protocol/messages.js';
import {
  acceptAssignment,
  newAcceptanceMemory,
  planSnapshot,
  type AcceptanceDecision,
  type AcceptanceOptions,
} from '../../src/agent/acceptance.js';

function assignment(id: string, epoch: number): AssignmentMessage {
  return {
    id,
    jobUid: `uid-${id}`,
    job: `default/${id}`,
    epoch,
    attempt: 1,
    cpuMillis: 500,
    memoryBytes: 1 << 20,
    durationMs: 1000,
    state: 'Assigned',
  };
}

describe('acceptAssignment', () => {
  // The node has already seen assignment "a1" at epoch 5.
  const cases: Array<{
    name: string;
    offer: [string, number];
    options?: AcceptanceOptions;
    expected: AcceptanceDecision;
  }> = [
    { name: 'newer epoch, new id', offer: ['a2', 6], expected: 'run' },
    { name: 'equal epoch, new id', offer: ['a2', 5], expected: 'run' },
    { name: 'older epoch, new id', offer: ['a2', 4], expected: 'reject-stale-epoch' },
    { name: 'duplicate id, same epoch', offer: ['a1', 5], expected: 'ignore-duplicate' },
    { name: 'duplicate id, newer epoch', offer: ['a1', 7], expected: 'ignore-duplicate' },
    { name: 'duplicate id, older epoch: ignored, not rejected', offer: ['a1', 3], expected: 'ignore-duplicate' },
    {
      name: 'older epoch with the epoch check broken',
      offer: ['a2', 4],
      options: { epochCheckBroken: true },
      expected: 'run',
    },
    { name: 'duplicate id with dedupe broken', offer: ['a1', 5], options: { dedupeBroken: true }, expected: 'run' },
    {
      name: 'duplicate of an older epoch with dedupe broken',
      offer: ['a1', 3],
      options: { dedupeBroken: true },
      expected: 'reject-stale-epoch',
    },
    {
      name: 'dedupe broken leaves the epoch check alone',
      offer: ['a2', 4],
      options: { dedupeBroken: true },
      expected: 'reject-stale-epoch',
    },
    {
      name: 'epoch check broken leaves dedupe alone',
      offer: ['a1', 5],
      options: { epochCheckBroken: true },
      expected: 'ignore-duplicate',
    },
    { name: 'both broken', offer: ['a1', 3], options: { epochCheckBroken: true, dedupeBroken: true }, expected: 'run' },
  ];

  it.each(cases)('$name → $expected', ({ offer, options, expected }) => {
    const memory = newAcceptanceMemory();
    expect(acceptAssignment(memory, assignment('a1', 5))).toBe('run');
    expect(acceptAssignment(memory, assignment(...offer), options)).toBe(expected);
  });

  it('remembers every offer, so a rejected id is decided once', () => {
    const memory = newAcceptanceMemory();
    expect(acceptAssignment(memory, assignment('new', 9))).toBe('run');
    expect(acceptAssignment(memory, assignment('old', 8))).toBe('reject-stale-epoch');
    expect(acceptAssignment(memory, assignment('old', 8))).toBe('ignore-duplicate');
    expect(memory.newestEpoch).toBe(9);
    expect([...memory.seen].sort()).toEqual(['new', 'old']);
  });

  it('a stale offer does not lower the newest epoch', () => {
    const memory = newAcceptanceMemory();
    acceptAssignment(memory, assignment('a', 7));
    acceptAssignment(memory, assignment('b', 2), { epochCheckBroken: true });
    expect(memory.newestEpoch).toBe(7);
  });
});

describe('planSnapshot', () => {
  it('starts new assignments, withdraws running ones no longer listed, leaves listed ones alone', () => {
    const memory = newAcceptanceMemory();
    planSnapshot(memory, new Set(), [assignment('a', 1), assignment('b', 1)]);
    const plan = planSnapshot(memory, new Set(['a', 'b']), [assignment('a', 1), assignment('c', 2)]);
    expect(plan.start.map((a) => a.id)).toEqual(['c']);
    expect(plan.withdraw).toEqual(['b']);
    expect(plan.reject).toEqual([]);
  });

  it('weighs one snapshot oldest epoch first, whatever its order', () => {
    const plan = planSnapshot(newAcceptanceMemory(), new Set(), [assignment('new', 4), assignment('old', 3)]);
    expect(plan.start.map((a) => a.id)).toEqual(['old', 'new']);
    expect(plan.reject).toEqual([]);
  });

  it('rejects an unseen assignment older than one seen in an earlier snapshot', () => {
    const memory = newAcceptanceMemory();
    planSnapshot(memory, new Set(), [assignment('new', 4)]);
    const plan = planSnapshot(memory, new Set(['new']), [assignment('new', 4), assignment('old', 3)]);
    expect(plan.reject.map((a) => a.id)).toEqual(['old']);
    expect(plan.start).toEqual([]);
  });

  it('does not rerun a stopped assignment listed again, unless dedupe is broken', () => {
    const memory = newAcceptanceMemory();
    planSnapshot(memory, new Set(), [assignment('a', 1)]);
    // "a" was stopped locally (self-fence, completed...) and the control plane lists it again
    expect(planSnapshot(memory, new Set(), [assignment('a', 1)]).start).toEqual([]);
    expect(
      planSnapshot(memory, new Set(), [assignment('a', 1)], { dedupeBroken: true }).start.map((a) => a.id),
    ).toEqual(['a']);
  });

  it('never starts an id twice in one process, even with dedupe broken', () => {
    const memory = newAcceptanceMemory();
    const options = { dedupeBroken: true };
    planSnapshot(memory, new Set(), [assignment('a', 1)], options);
    expect(planSnapshot(memory, new Set(['a']), [assignment('a', 1)], options).start).toEqual([]);
    expect(
      planSnapshot(memory, new Set(), [assignment('b', 1), assignment('b', 1)], options).start.map((a) => a.id),
    ).toEqual(['b']);
  });
});
