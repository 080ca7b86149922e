// Fair share in the placement round, pure: rounds simulated on plain data with a fixed sequence
// of jobs ending, no clock.
import { describe, expect, it } from 'vitest';
import { bestFit, type NodeCapacity, type PendingJob } from '../../src/placement/best-fit.js';
import {
  laneWeights,
  newShareMemory,
  type NamespaceQuotaState,
  type QueueState,
  type Shares,
} from '../../src/fair-share/share-order.js';
import type { Lane } from '../../src/domain/resources.js';
import { ReasonMarks } from '../../src/placement/reason-marks.js';

const GI = 1024 ** 3;

function node(name: string, cpu = 4000, memGi = 8): NodeCapacity {
  return { name, cpuMillis: cpu, memoryBytes: memGi * GI, allocatedCpuMillis: 0, allocatedMemoryBytes: 0, labels: {} };
}

function queue(key: string, extra: Partial<QueueState> = {}): QueueState {
  return {
    key,
    weight: 1,
    strictLanes: false,
    concurrencyLimit: null,
    cpuLimitMillis: null,
    memoryLimitBytes: null,
    running: 0,
    cpuMillis: 0,
    memoryBytes: 0,
    ...extra,
  };
}

let serial = 0;
function jobs(
  queueKey: string,
  n: number,
  opts: { cpu?: number; memGi?: number; lane?: Lane; durationMs?: number } = {},
): PendingJob[] {
  return Array.from({ length: n }, () => ({
    uid: `${queueKey}#${serial++}`,
    cpuMillis: opts.cpu ?? 1000,
    memoryBytes: (opts.memGi ?? 1) * GI,
    durationMs: opts.durationMs ?? 1000,
    nodeSelector: {},
    namespace: queueKey.split('/')[0]!,
    queue: queueKey,
    lane: opts.lane ?? 1,
  }));
}

/**
 * A saturated cluster over many rounds: each round, `frees` of the running jobs end (oldest
 * first) and a round places what fits. Returns the jobs placed, in order.
 */
function simulate(
  backlog: PendingJob[],
  nodes: NodeCapacity[],
  queues: QueueState[],
  rounds: number,
  frees: number,
  shares: Partial<Shares> = {},
): PendingJob[] {
  const memory = newShareMemory();
  const pending = new Map(backlog.map((j) => [j.uid, j]));
  const running: Array<{ job: PendingJob; node: string }> = [];
  const placedOrder: PendingJob[] = [];
  const states = new Map(queues.map((q) => [q.key, { ...q }]));
  for (let round = 0; round < rounds; round++) {
    if (round > 0) {
      for (const ended of running.splice(0, frees)) {
        const n = nodes.find((x) => x.name === ended.node)!;
        n.allocatedCpuMillis -= ended.job.cpuMillis;
        n.allocatedMemoryBytes -= ended.job.memoryBytes;
        const q = states.get(ended.job.queue!);
        if (q) {
          q.running--;
          q.cpuMillis -= ended.job.cpuMillis;
          q.memoryBytes -= ended.job.memoryBytes;
        }
      }
    }
    const result = bestFit(
      [...pending.values()],
      nodes,
      undefined,
      {},
      { fairShare: true, queues: [...states.values()], quotas: [], memory, ...shares },
    );
    for (const p of result.placements) {
      const job = pending.get(p.jobUid)!;
      pending.delete(p.jobUid);
      const n = nodes.find((x) => x.name === p.node)!;
      n.allocatedCpuMillis += job.cpuMillis;
      n.allocatedMemoryBytes += job.memoryBytes;
      const q = states.get(job.queue!);
      if (q) {
        q.running++;
        q.cpuMillis += job.cpuMillis;
        q.memoryBytes += job.memoryBytes;
      }
      running.push({ job, node: p.node });
      placedOrder.push(job);
    }
  }
  return placedOrder;
}

function countBy(placed: PendingJob[], key: (j: PendingJob) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const j of placed) counts[key(j)] = (counts[key(j)] ?? 0) + 1;
  return counts;
}

describe('laneWeights: an empty lane passes its share down, else up', () => {
  it.each([
    { ready: [true, true, true], weights: [70, 20, 10] },
    { ready: [false, true, true], weights: [0, 90, 10] },
    { ready: [true, false, true], weights: [70, 0, 30] },
    { ready: [true, true, false], weights: [70, 30, 0] },
    { ready: [false, false, true], weights: [0, 0, 100] },
    { ready: [true, false, false], weights: [100, 0, 0] },
    { ready: [false, true, false], weights: [0, 100, 0] },
    { ready: [false, false, false], weights: [0, 0, 0] },
  ])('$ready → $weights', ({ ready, weights }) => {
    expect(laneWeights(ready)).toEqual(weights);
  });
});

describe('fair share across queues (DRR)', () => {
  it('one queue alone is placed exactly as without queues (most work first, best fit)', () => {
    const nodes = () => [node('a', 4000, 8), node('b', 8000, 16), node('c', 2000, 4)];
    const mixed: PendingJob[] = [];
    for (let i = 0; i < 60; i++) {
      mixed.push({
        ...jobs('ns/default', 1, {
          cpu: 250 * (1 + (i % 7)),
          memGi: 1 + (i % 3),
          durationMs: 1000 * (1 + (i % 5)),
        })[0]!,
      });
    }
    const plain = bestFit(mixed, nodes());
    const shared = bestFit(
      mixed,
      nodes(),
      undefined,
      {},
      { fairShare: true, queues: [queue('ns/default')], quotas: [], memory: newShareMemory() },
    );
    expect(shared.placements).toEqual(plain.placements);
  });

  it('weights 3:1 under saturation give 3:1 of the placements', () => {
    const nodes = [node('n1'), node('n2'), node('n3'), node('n4')];
    const placed = simulate(
      [...jobs('t/a', 3000), ...jobs('t/b', 3000)],
      nodes,
      [queue('t/a', { weight: 3 }), queue('t/b', { weight: 1 })],
      400,
      3,
    );
    const counts = countBy(placed.slice(16), (j) => j.queue!); // after the first, empty-cluster round
    expect(counts['t/a']! / counts['t/b']!).toBeGreaterThan(3 * 0.95);
    expect(counts['t/a']! / counts['t/b']!).toBeLessThan(3 * 1.05);
  });

  it('shares by dominant resource: a queue of jobs twice as large gets half as many', () => {
    const nodes = [node('n1', 8000, 16), node('n2', 8000, 16)];
    const placed = simulate(
      [...jobs('t/small', 3000, { cpu: 1000 }), ...jobs('t/large', 3000, { cpu: 2000 })],
      nodes,
      [queue('t/small'), queue('t/large')],
      600,
      2,
    );
    const cpu = (key: string) =>
      placed
        .slice(12)
        .filter((j) => j.queue === key)
        .reduce((s, j) => s + j.cpuMillis, 0);
    expect(cpu('t/small') / cpu('t/large')).toBeGreaterThan(0.9);
    expect(cpu('t/small') / cpu('t/large')).toBeLessThan(1.1);
  });

  it('a trickle job behind a flood gets the next room that frees, not the flood’s turn after all of it', () => {
    const nodes = [node('n1'), node('n2')];
    const flood = jobs('a/default', 2000);
    const trickle = jobs('b/default', 1);
    const memory = newShareMemory();
    // Full cluster, the flood's turn in progress, then one job ends and the trickle job arrives.
    const full = nodes.map((n) => ({ ...n, allocatedCpuMillis: n.cpuMillis, allocatedMemoryBytes: 4 * GI }));
    const queues = [queue('a/default', { running: 8, cpuMillis: 8000, memoryBytes: 8 * GI }), queue('b/default')];
    bestFit(flood, full, undefined, {}, { fairShare: true, queues, quotas: [], memory });
    const placedFor: string[] = [];
    for (let freed = 0; freed < 2; freed++) {
      full[0]!.allocatedCpuMillis -= 1000;
      const round = bestFit(
        [...flood, ...trickle],
        full,
        undefined,
        {},
        { fairShare: true, queues, quotas: [], memory },
      );
      expect(round.placements).toHaveLength(1);
      placedFor.push(round.placements[0]!.jobUid.split('#')[0]!);
      full[0]!.allocatedCpuMillis += 1000;
    }
    expect(placedFor).toContain('b/default');
  });

  it('with fair share off, one backlog in arrival order: the trickle waits behind the flood', () => {
    const nodes = [node('n1'), node('n2')];
    const backlog = [...jobs('a/default', 200), ...jobs('b/default', 1)];
    const placed = simulate(backlog, nodes, [queue('a/default'), queue('b/default')], 40, 2, { fairShare: false });
    expect(placed.findIndex((j) => j.queue === 'b/default')).toBe(-1);
  });
});

describe('lanes within a queue', () => {
  const nodes = () => [node('n1'), node('n2'), node('n3'), node('n4'), node('n5')];
  const saturated = (backlog: PendingJob[], q: QueueState) =>
    countBy(simulate(backlog, nodes(), [q], 500, 2).slice(20), (j) => String(j.lane));

  it('high 70 %, normal 20 %, low 10 % of what the queue is given', () => {
    const counts = saturated(
      [...jobs('t/q', 1000, { lane: 0 }), ...jobs('t/q', 1000, { lane: 1 }), ...jobs('t/q', 1000, { lane: 2 })],
      queue('t/q'),
    );
    const total = counts['0']! + counts['1']! + counts['2']!;
    expect(counts['0']! / total).toBeCloseTo(0.7, 1);
    expect(counts['1']! / total).toBeCloseTo(0.2, 1);
    expect(counts['2']! / total).toBeCloseTo(0.1, 1);
  });

  it('an empty high lane passes its share down: normal 90 %, low 10 %', () => {
    const counts = saturated([...jobs('t/q', 1000, { lane: 1 }), ...jobs('t/q', 1000, { lane: 2 })], queue('t/q'));
    const total = counts['1']! + counts['2']!;
    expect(counts['1']! / total).toBeCloseTo(0.9, 1);
    expect(counts['2']! / total).toBeCloseTo(0.1, 1);
  });

  it('low is never starved while high has jobs; strict lanes serve high first', () => {
    const backlog = () => [...jobs('t/q', 600, { lane: 0 }), ...jobs('t/q', 600, { lane: 2 })];
    expect(saturated(backlog(), queue('t/q'))['2']).toBeGreaterThan(50);
    const strict = simulate(backlog(), nodes(), [queue('t/q', { strictLanes: true })], 500, 2).map((j) => j.lane);
    expect(strict.indexOf(2)).toBe(600); // every high job first, then low
    expect(strict.lastIndexOf(0)).toBe(599);
  });
});

describe('limits hold whatever the share', () => {
  const round = (
    backlog: PendingJob[],
    queues: QueueState[],
    quotas: NamespaceQuotaState[] = [],
    ignoreLimits = false,
  ) =>
    bestFit(
      backlog,
      [node('n1', 16000, 64), node('n2', 16000, 64)],
      undefined,
      {},
      { fairShare: true, queues, quotas, memory: newShareMemory(), ignoreLimits },
    );
  const quota = (extra: Partial<NamespaceQuotaState>): NamespaceQuotaState => ({
    namespace: 't',
    name: 'limits',
    cpuLimitMillis: null,
    memoryLimitBytes: null,
    cpuMillis: 0,
    memoryBytes: 0,
    tokens: null,
    perSecond: null,
    burst: null,
    ...extra,
  });

  it('a concurrency limit counts the jobs already placed; the rest wait QueueAtLimit', () => {
    const r = round(jobs('t/q', 10), [queue('t/q', { concurrencyLimit: 3, running: 1 })]);
    expect(r.placements).toHaveLength(2);
    expect(r.waiting.map((w) => w.reason)).toEqual(Array(8).fill('QueueAtLimit'));
    expect(r.waiting[0]!.message).toContain('spec.concurrencyLimit');
  });

  it('a resource limit holds jobs that would go past it, and lets smaller ones through', () => {
    const large = jobs('t/q', 3, { cpu: 3000, durationMs: 10_000 });
    const small = jobs('t/q', 3, { cpu: 500 });
    const r = round([...large, ...small], [queue('t/q', { cpuLimitMillis: 4000 })]);
    // Most work first: one large job (3000), then two small ones fill the limit exactly.
    expect(r.placements.map((p) => p.jobUid)).toEqual([large[0]!.uid, small[0]!.uid, small[1]!.uid]);
    expect(r.waiting.map((w) => w.reason)).toEqual(['QueueAtLimit', 'QueueAtLimit', 'QueueAtLimit']);
  });

  it('a namespace quota on CPU and a placement rate hold jobs QuotaExceeded', () => {
    const cpu = round(jobs('t/q', 10), [queue('t/q')], [quota({ cpuLimitMillis: 4000, cpuMillis: 1000 })]);
    expect(cpu.placements).toHaveLength(3);
    expect(cpu.waiting.every((w) => w.reason === 'QuotaExceeded')).toBe(true);
    const rate = round(jobs('t/q', 10), [queue('t/q')], [quota({ tokens: 4.7, perSecond: 5, burst: 10 })]);
    expect(rate.placements).toHaveLength(4);
    expect(rate.waiting.every((w) => w.reason === 'QuotaExceeded' && w.message.includes('placements a second'))).toBe(
      true,
    );
  });

  it('broken variant (guard queue-limit-plan): the round places past the limit', () => {
    const r = round(jobs('t/q', 10), [queue('t/q', { concurrencyLimit: 3 })], [], true);
    expect(r.placements.length).toBeGreaterThan(3);
  });

  it('other queues are served while one is at its limit', () => {
    const r = round([...jobs('t/a', 10), ...jobs('t/b', 10)], [queue('t/a', { concurrencyLimit: 2 }), queue('t/b')]);
    expect(
      countBy(
        r.placements.map((p) => ({ queue: p.jobUid.split('#')[0] }) as PendingJob),
        (j) => j.queue!,
      ),
    ).toEqual({ 't/a': 2, 't/b': 10 });
  });
});

describe('why each job left waits', () => {
  const full = () => [node('n1', 2000, 64)];
  const shares = (queues: QueueState[], extra: Partial<Shares> = {}): Shares => ({
    fairShare: true,
    queues,
    quotas: [],
    memory: newShareMemory(),
    ...extra,
  });

  it('names each job’s own queue and namespace: queues at their limit, one waiting for its share, one out of its namespace’s placement tokens', () => {
    const quota: NamespaceQuotaState = {
      namespace: 'u',
      name: 'rate',
      cpuLimitMillis: null,
      memoryLimitBytes: null,
      cpuMillis: 0,
      memoryBytes: 0,
      tokens: 0,
      perSecond: 1,
      burst: 1,
    };
    const queues = [
      queue('t/a', { concurrencyLimit: 1, running: 1 }),
      queue('t/b'),
      queue('t/d', { concurrencyLimit: 1, running: 1 }),
      queue('u/c'),
    ];
    const expected: Record<string, string> = {
      't/a': 'QueueAtLimit',
      't/b': 'WaitingForShare',
      't/d': 'QueueAtLimit',
      'u/c': 'QuotaExceeded',
    };
    // Interleaved, so that no job's reason can be its neighbour's. The cluster is full: the
    // round stops at t/b's first job, and the queues after it give their standing reasons.
    const byQueue = Object.keys(expected).map((key) => jobs(key, 3));
    const backlog = byQueue[0]!.flatMap((_, i) => byQueue.map((q) => q[i]!));
    const busy = full().map((n) => ({ ...n, allocatedCpuMillis: n.cpuMillis }));
    const r = bestFit(backlog, busy, undefined, {}, { ...shares(queues), quotas: [quota] });
    expect(r.placements).toEqual([]);
    expect(r.waiting.map((w) => `${w.jobUid} ${w.reason}`)).toEqual(
      backlog.map((j) => `${j.uid} ${expected[j.queue!]}`),
    );
    expect(r.waiting.find((w) => w.jobUid.startsWith('t/b'))!.message).toContain('queue t/b, weight 1');
    expect(r.waiting.find((w) => w.jobUid.startsWith('t/d'))!.message).toContain('queue t/d has 1 jobs placed');
  });

  it('leaves out the reasons already written (the leader’s ReasonMarks) and stops at the round’s budget', () => {
    const backlog = jobs('t/q', 10);
    const first = bestFit(backlog, full(), undefined, {}, shares([queue('t/q')], { maxReasons: 3 }));
    expect(first.placements).toHaveLength(2);
    expect(first.waiting.map((w) => w.jobUid)).toEqual(backlog.slice(2, 5).map((j) => j.uid));
    const written = new ReasonMarks();
    written.mark(first.waiting);
    const next = bestFit(
      backlog.slice(2),
      [node('n1', 2000, 64)].map((n) => ({ ...n, allocatedCpuMillis: 2000 })),
      undefined,
      {},
      shares([queue('t/q', { running: 2 })], {
        maxReasons: 3,
        reasonKnown: (uid, reason, message) => written.has(uid, reason, message),
      }),
    );
    expect(next.waiting.map((w) => w.jobUid)).toEqual(backlog.slice(5, 8).map((j) => j.uid));
  });
});
