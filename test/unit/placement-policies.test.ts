import { describe, expect, it } from 'vitest';
import { bestFit, matchesSelector, type NodeCapacity, type PendingJob } from '../../src/placement/best-fit.js';
import {
  FIT_RULES,
  fitScore,
  jobSequence,
  orderJobs,
  parsePolicy,
  type FitRule,
} from '../../src/placement/policies.js';
import { seededRandom } from '../../src/seeded-random.js';

const GI = 1024 ** 3;

/** The specification the index must agree with: every job, in order, looks at every node. */
function naiveRound(jobs: readonly PendingJob[], nodes: readonly NodeCapacity[], fit: FitRule): string[] {
  const free = nodes.map((n) => ({
    n,
    cpu: n.cpuMillis - n.allocatedCpuMillis,
    memory: n.memoryBytes - n.allocatedMemoryBytes,
  }));
  const placed: string[] = [];
  for (const job of jobs) {
    let best: (typeof free)[number] | undefined;
    let bestScore = Infinity;
    for (const f of free) {
      if (!matchesSelector(f.n.labels, job.nodeSelector) || f.cpu < job.cpuMillis || f.memory < job.memoryBytes)
        continue;
      const score = fitScore(
        fit,
        (f.cpu - job.cpuMillis) / f.n.cpuMillis,
        (f.memory - job.memoryBytes) / f.n.memoryBytes,
      );
      if (score < bestScore) [best, bestScore] = [f, score];
    }
    if (!best) continue;
    best.cpu -= job.cpuMillis;
    best.memory -= job.memoryBytes;
    placed.push(`${job.uid}@${best.cpu}/${best.memory}`);
  }
  return placed;
}

function randomCluster(seed: number) {
  const random = seededRandom(seed);
  const shapes: Array<[number, number]> = [
    [4000, 16 * GI],
    [8000, 32 * GI],
    [16000, 32 * GI],
  ];
  const nodes: NodeCapacity[] = Array.from({ length: 5 + Math.floor(random() * 40) }, (_, i) => {
    const [cpu, memory] = shapes[Math.floor(random() * shapes.length)]!;
    const used = random() < 0.5 ? 0 : random() * 0.8;
    return {
      name: `n${i}`,
      cpuMillis: cpu,
      memoryBytes: memory,
      allocatedCpuMillis: Math.floor(cpu * used),
      allocatedMemoryBytes: Math.floor(memory * used * random()),
      labels: (random() < 0.2 ? { pool: 'gpu' } : {}) as Record<string, string>,
    };
  });
  const jobs: PendingJob[] = Array.from({ length: 50 + Math.floor(random() * 400) }, (_, i) => ({
    uid: `j${i}`,
    cpuMillis: 1 + Math.floor(random() * 6000),
    memoryBytes: 1 + Math.floor(random() * 12 * GI),
    durationMs: 1000,
    nodeSelector: (random() < 0.05 ? { pool: 'gpu' } : {}) as Record<string, string>,
  }));
  return { nodes, jobs };
}

describe('the free-capacity index', () => {
  it.each(FIT_RULES.flatMap((fit) => Array.from({ length: 40 }, (_, seed) => ({ fit, seed: seed + 1 }))))(
    'finds the same node as looking at every node ($fit, seed $seed)',
    ({ fit, seed }) => {
      const { nodes, jobs } = randomCluster(seed);
      const round = bestFit(jobs, nodes, { ordering: 'arrival', fit });
      // Compare what each placed job left free on its node: interchangeable nodes (same shape,
      // same free capacity) may be picked in another order, which changes nothing.
      const byName = new Map(
        nodes.map((n) => [
          n.name,
          { cpu: n.cpuMillis - n.allocatedCpuMillis, memory: n.memoryBytes - n.allocatedMemoryBytes },
        ]),
      );
      const jobsByUid = new Map(jobs.map((j) => [j.uid, j]));
      const indexed = round.placements.map((p) => {
        const free = byName.get(p.node)!;
        const job = jobsByUid.get(p.jobUid)!;
        free.cpu -= job.cpuMillis;
        free.memory -= job.memoryBytes;
        return `${p.jobUid}@${free.cpu}/${free.memory}`;
      });
      expect(indexed).toEqual(naiveRound(jobs, nodes, fit));
      expect(indexed.length).toBeGreaterThan(0);
    },
  );
});

describe('orderings', () => {
  const nodes: NodeCapacity[] = [
    { name: 'n', cpuMillis: 10_000, memoryBytes: 10 * GI, allocatedCpuMillis: 0, allocatedMemoryBytes: 0, labels: {} },
  ];
  const job = (uid: string, cpu: number, memGi: number, seconds: number): PendingJob => ({
    uid,
    cpuMillis: cpu,
    memoryBytes: memGi * GI,
    durationMs: seconds * 1000,
    nodeSelector: {},
  });
  const jobs = [
    job('small-long', 1000, 1, 100),
    job('cpu-big', 5000, 1, 1),
    job('memory-big', 1000, 6, 1),
    job('small-short', 1000, 1, 1),
  ];

  it('arrival keeps the order given', () => {
    expect(orderJobs(jobs, 'arrival', nodes).map((j) => j.uid)).toEqual([
      'small-long',
      'cpu-big',
      'memory-big',
      'small-short',
    ]);
  });

  it('largest-first sorts by the larger share of CPU or memory, ties in arrival order', () => {
    expect(orderJobs(jobs, 'largest-first', nodes).map((j) => j.uid)).toEqual([
      'memory-big',
      'cpu-big',
      'small-long',
      'small-short',
    ]);
  });

  it('most-work-first weighs the share by how long the job runs', () => {
    expect(orderJobs(jobs, 'most-work-first', nodes).map((j) => j.uid)).toEqual([
      'small-long',
      'memory-big',
      'cpu-big',
      'small-short',
    ]);
  });

  it('most-work-balanced draws from CPU-heavy or memory-heavy jobs by what the cluster has more of free', () => {
    const sequence = () => jobSequence(jobs, 'most-work-balanced', nodes);
    // Memory fuller than CPU: a CPU-heavy job next, the most work first (even shares count as CPU-heavy).
    expect(sequence().next({ cpu: 0.2, memory: 0.6 })!.uid).toBe('small-long');
    expect(sequence().next({ cpu: 0.6, memory: 0.2 })!.uid).toBe('memory-big');
    // One queue empty: the other still gives its jobs.
    const s = sequence();
    const seen = Array.from({ length: 5 }, () => s.next({ cpu: 0.9, memory: 0.1 })?.uid);
    expect(seen).toEqual(['memory-big', 'small-long', 'cpu-big', 'small-short', undefined]);
  });

  it('decides who gets the last room', () => {
    const tight: NodeCapacity[] = [{ ...nodes[0]!, cpuMillis: 5000 }];
    expect(bestFit(jobs, tight, { ordering: 'arrival', fit: 'best-fit' }).placements.map((p) => p.jobUid)).toEqual([
      'small-long',
      'memory-big',
      'small-short',
    ]);
    expect(
      bestFit(jobs, tight, { ordering: 'largest-first', fit: 'best-fit' }).placements.map((p) => p.jobUid),
    ).toEqual(['cpu-big']);
  });

  it('parses a policy and says what is wrong with a bad one', () => {
    expect(parsePolicy('largest-first+balanced-fit')).toEqual({ ordering: 'largest-first', fit: 'balanced-fit' });
    expect(() => parsePolicy('random')).toThrow(
      'placement policy: "random" is not an ordering (one of arrival, largest-first, most-work-first, most-work-balanced)',
    );
    expect(() => parsePolicy('arrival+worst-fit')).toThrow('"worst-fit" is not a fit rule');
  });
});
