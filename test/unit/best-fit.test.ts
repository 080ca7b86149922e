import { describe, expect, it } from 'vitest';
import { bestFit, matchesSelector, type NodeCapacity, type PendingJob } from '../../src/placement/best-fit.js';

const GI = 1024 ** 3;

function node(
  name: string,
  cpu: number,
  memGi: number,
  used: [number, number] = [0, 0],
  labels: Record<string, string> = {},
): NodeCapacity {
  return {
    name,
    cpuMillis: cpu,
    memoryBytes: memGi * GI,
    allocatedCpuMillis: used[0],
    allocatedMemoryBytes: used[1] * GI,
    labels,
  };
}

function job(uid: string, cpu: number, memGi: number, nodeSelector: Record<string, string> = {}): PendingJob {
  return { uid, cpuMillis: cpu, memoryBytes: memGi * GI, durationMs: 1000, nodeSelector };
}

describe('bestFit', () => {
  const cases: Array<{
    name: string;
    jobs: PendingJob[];
    nodes: NodeCapacity[];
    placed: Record<string, string>;
    unschedulable?: string[];
  }> = [
    {
      name: 'picks the tightest node, not the first or the emptiest',
      jobs: [job('j', 1000, 1)],
      nodes: [node('roomy', 8000, 16), node('tight', 2000, 2, [500, 0.5]), node('half', 4000, 4, [1000, 1])],
      placed: { j: 'tight' },
    },
    {
      name: 'counts what earlier jobs of the same round took',
      jobs: [job('a', 2000, 2), job('b', 2000, 2)],
      nodes: [node('n1', 2000, 2), node('n2', 4000, 4)],
      placed: { a: 'n1', b: 'n2' },
    },
    {
      name: 'needs both CPU and memory to fit',
      jobs: [job('memory-heavy', 500, 6)],
      nodes: [node('cpu-rich', 8000, 4), node('memory-rich', 2000, 8)],
      placed: { 'memory-heavy': 'memory-rich' },
    },
    {
      name: 'leaves a job pending (not unschedulable) when nodes are merely full',
      jobs: [job('waits', 2000, 1)],
      nodes: [node('full', 2000, 2, [1000, 0])],
      placed: {},
    },
    {
      name: 'marks a job larger than every node unschedulable',
      jobs: [job('huge', 64_000, 1)],
      nodes: [node('n1', 4000, 8), node('n2', 8000, 8)],
      placed: {},
      unschedulable: ['huge'],
    },
    {
      name: 'honours nodeSelector, and marks a job no node matches unschedulable',
      jobs: [job('gpu', 1000, 1, { pool: 'gpu' }), job('nowhere', 1000, 1, { pool: 'moon' })],
      nodes: [node('cpu-1', 2000, 2, [0, 0], { pool: 'default' }), node('gpu-1', 8000, 8, [0, 0], { pool: 'gpu' })],
      placed: { gpu: 'gpu-1' },
      unschedulable: ['nowhere'],
    },
    {
      name: 'places jobs in the order given',
      jobs: [job('first', 2000, 2), job('second', 2000, 2)],
      nodes: [node('only', 2000, 2)],
      placed: { first: 'only' },
    },
    {
      name: 'places nothing on no nodes',
      jobs: [job('j', 1, 0.001)],
      nodes: [],
      placed: {},
      unschedulable: ['j'],
    },
  ];

  it.each(cases)('$name', ({ jobs, nodes, placed, unschedulable = [] }) => {
    const round = bestFit(jobs, nodes);
    expect(Object.fromEntries(round.placements.map((p) => [p.jobUid, p.node]))).toEqual(placed);
    expect(round.unschedulable.map((u) => u.jobUid)).toEqual(unschedulable);
  });

  it('never overcommits a node, whatever the order', () => {
    const nodes = [node('a', 4000, 8), node('b', 3000, 4), node('c', 1000, 16)];
    const jobs = Array.from({ length: 40 }, (_, i) =>
      job(`j${i}`, 250 + ((i * 373) % 1500), 0.25 + ((i * 7) % 5) * 0.5),
    );
    const round = bestFit(jobs, nodes);
    for (const n of nodes) {
      const mine = round.placements.filter((p) => p.node === n.name).map((p) => jobs.find((j) => j.uid === p.jobUid)!);
      expect(mine.reduce((s, j) => s + j.cpuMillis, 0)).toBeLessThanOrEqual(n.cpuMillis);
      expect(mine.reduce((s, j) => s + j.memoryBytes, 0)).toBeLessThanOrEqual(n.memoryBytes);
    }
  });

  it('gives a node no more jobs than its free slots, whatever room it has, and the rest to others', () => {
    const slots = (n: NodeCapacity, freeSlots: number): NodeCapacity => ({ ...n, freeSlots });
    const jobs = Array.from({ length: 10 }, (_, i) => job(`j${i}`, 10, 0.01));
    const nodes = [
      slots(node('tight', 4000, 8, [3000, 0]), 3),
      slots(node('roomy', 64_000, 64), 4),
      slots(node('full', 64_000, 64), 0),
    ];
    const round = bestFit(jobs, nodes);
    const count = (name: string) => round.placements.filter((p) => p.node === name).length;
    expect([count('tight'), count('roomy'), count('full')]).toEqual([3, 4, 0]);
    expect(round.unschedulable).toEqual([]); // waiting for a slot, not unschedulable
    // The selector path (a plain scan) keeps to the slots as well.
    const selective = bestFit(
      jobs.map((j) => ({ ...j, nodeSelector: { pool: 'p' } })),
      nodes.map((n) => ({ ...n, labels: { pool: 'p' } })),
    );
    expect(selective.placements.filter((p) => p.node === 'tight').length).toBe(3);
    expect(selective.placements.filter((p) => p.node === 'full').length).toBe(0);
    expect(selective.placements.length).toBe(7);
  });

  it('explains why a job is unschedulable', () => {
    const round = bestFit([job('huge', 64_000, 1)], [node('n1', 4000, 8)]);
    expect(round.unschedulable[0]!.message).toBe(
      '0/1 nodes are available: the job is larger than every node (1 with too little CPU capacity)',
    );
  });
});

describe('matchesSelector', () => {
  it.each([
    [{ pool: 'a', os: 'linux' }, { pool: 'a' }, true],
    [{ pool: 'a' }, { pool: 'b' }, false],
    [{ pool: 'a' }, {}, true],
    [{}, { pool: 'a' }, false],
  ])('%j matches %j: %s', (labels, selector, expected) => {
    expect(matchesSelector(labels, selector)).toBe(expected);
  });
});
