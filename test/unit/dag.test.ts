import { describe, expect, it } from 'vitest';
import {
  components,
  criticalPathMs,
  findCycle,
  remainingPathMs,
  stages,
  type DagJob,
} from '../../src/workflows/dag.js';

/** `job('test', ['build'], 30)`: a job named test that needs build and runs 30 ms. */
const job = (name: string, needs: string[] = [], durationMs = 1): DagJob => ({ name, needs, durationMs });

/** A chain a0 → a1 → … of `length` jobs, each needing the one before. */
const chain = (length: number): DagJob[] =>
  Array.from({ length }, (_, i) => job(`a${i}`, i === 0 ? [] : [`a${i - 1}`]));

// build → test-linux / test-windows / test-macos → release
const pipeline: DagJob[] = [
  job('build', [], 60),
  job('test-linux', ['build'], 30),
  job('test-windows', ['build'], 90),
  job('test-macos', ['build'], 45),
  job('release', ['test-linux', 'test-windows', 'test-macos'], 10),
];

describe('findCycle', () => {
  it.each<{ name: string; jobs: DagJob[]; cycle: string[] | null }>([
    {
      name: 'two jobs needing each other',
      jobs: [job('build', ['test']), job('test', ['build'])],
      cycle: ['build', 'test', 'build'],
    },
    { name: 'a job needing itself', jobs: [job('a', ['a'])], cycle: ['a', 'a'] },
    {
      // deploy → (test ← lint ← build ← test): the prefix deploy is not on the cycle.
      name: 'a longer cycle behind an acyclic prefix, in work-flow order',
      jobs: [job('deploy', ['test']), job('test', ['build']), job('build', ['lint']), job('lint', ['test'])],
      cycle: ['test', 'lint', 'build', 'test'],
    },
    {
      name: 'a cycle reached only from a later root, past finished parts',
      jobs: [job('x'), job('y', ['x']), job('p', ['q', 'y']), job('q', ['r']), job('r', ['p'])],
      cycle: ['p', 'r', 'q', 'p'],
    },
    { name: 'no jobs', jobs: [], cycle: null },
    { name: 'a lone job', jobs: [job('a')], cycle: null },
    { name: 'the CI pipeline', jobs: pipeline, cycle: null },
    {
      name: 'a diamond (two paths to one job are not a cycle)',
      jobs: [job('a'), job('b', ['a']), job('c', ['a']), job('d', ['b', 'c'])],
      cycle: null,
    },
    { name: 'needs on unknown jobs', jobs: [job('a', ['ghost']), job('b', ['a', 'phantom'])], cycle: null },
    { name: 'a need listed twice', jobs: [job('a'), job('b', ['a', 'a'])], cycle: null },
  ])('$name', ({ jobs, cycle }) => {
    expect(findCycle(jobs)).toEqual(cycle);
  });

  it('walks a 10,000-job chain without overflowing the stack, and finds the cycle that closes it', () => {
    const jobs = chain(10_000);
    expect(findCycle(jobs)).toBeNull();
    // Reversed, each root's search runs the whole chain down at once.
    expect(findCycle([...jobs].reverse())).toBeNull();
    jobs[0] = job('a0', ['a9999']);
    const cycle = findCycle(jobs)!;
    expect(cycle).toHaveLength(10_001);
    expect(cycle.slice(0, 3)).toEqual(['a0', 'a1', 'a2']);
    expect(cycle.slice(-2)).toEqual(['a9999', 'a0']);
  });
});

describe('stages', () => {
  it.each<{ name: string; jobs: DagJob[]; stage: Record<string, number> }>([
    {
      name: 'the CI pipeline',
      jobs: pipeline,
      stage: { build: 0, 'test-linux': 1, 'test-windows': 1, 'test-macos': 1, release: 2 },
    },
    // c needs a (stage 0) and b (stage 1): its stage follows its latest need.
    {
      name: 'a job after its latest need',
      jobs: [job('c', ['a', 'b']), job('b', ['a']), job('a')],
      stage: { a: 0, b: 1, c: 2 },
    },
    { name: 'independent jobs all at stage 0', jobs: [job('a'), job('b'), job('c')], stage: { a: 0, b: 0, c: 0 } },
    { name: 'unknown needs ignored', jobs: [job('a', ['ghost']), job('b', ['a'])], stage: { a: 0, b: 1 } },
    { name: 'a need listed twice', jobs: [job('a'), job('b', ['a', 'a'])], stage: { a: 0, b: 1 } },
    // Jobs on a cycle, and after one, never become ready: they are left out.
    {
      name: 'a cycle left out',
      jobs: [job('a'), job('b', ['a', 'c']), job('c', ['b']), job('d', ['c'])],
      stage: { a: 0 },
    },
  ])('$name', ({ jobs, stage }) => {
    expect(Object.fromEntries(stages(jobs))).toEqual(stage);
  });

  it('numbers a 10,000-job chain 0 to 9,999', () => {
    const result = stages(chain(10_000));
    expect(result.get('a0')).toBe(0);
    expect(result.get('a9999')).toBe(9999);
  });
});

describe('components', () => {
  it.each<{ name: string; jobs: DagJob[]; parts: string[][] }>([
    {
      name: 'the CI pipeline is one part',
      jobs: pipeline,
      parts: [['build', 'test-linux', 'test-windows', 'test-macos', 'release']],
    },
    { name: 'lone jobs are a part each', jobs: [job('a'), job('b')], parts: [['a'], ['b']] },
    {
      name: 'interleaved parts, each in workflow order, in the order of their first job',
      jobs: [job('x1'), job('y1'), job('x2', ['x1']), job('z1'), job('y2', ['y1']), job('x3', ['x2'])],
      parts: [['x1', 'x2', 'x3'], ['y1', 'y2'], ['z1']],
    },
    // A job that needs two parts joins them: it runs only when both have.
    {
      name: 'a join merges two parts',
      jobs: [job('a'), job('b'), job('c', ['a', 'b']), job('d')],
      parts: [['a', 'b', 'c'], ['d']],
    },
    { name: 'unknown needs join nothing', jobs: [job('a', ['ghost']), job('b', ['ghost'])], parts: [['a'], ['b']] },
    { name: 'no jobs', jobs: [], parts: [] },
  ])('$name', ({ jobs, parts }) => {
    expect(components(jobs)).toEqual(parts);
  });
});

describe('remainingPathMs and criticalPathMs', () => {
  it.each<{ name: string; jobs: DagJob[]; path: Record<string, number>; critical: number }>([
    {
      // The longest chain runs through test-windows: 60 + 90 + 10.
      name: 'the CI pipeline',
      jobs: pipeline,
      path: { build: 160, 'test-linux': 40, 'test-windows': 100, 'test-macos': 55, release: 10 },
      critical: 160,
    },
    {
      // Many short jobs on one side, one long job on the other: the path is durations, not hops.
      name: 'the long branch wins over the deep one',
      jobs: [
        job('a', [], 5),
        job('b1', ['a'], 1),
        job('b2', ['b1'], 1),
        job('b3', ['b2'], 1),
        job('c', ['a'], 20),
        job('d', ['b3', 'c'], 2),
      ],
      path: { a: 27, b1: 5, b2: 4, b3: 3, c: 22, d: 2 },
      critical: 27,
    },
    {
      name: 'independent parts: the longest of their chains',
      jobs: [job('a', [], 10), job('b', ['a'], 10), job('x', [], 50)],
      path: { a: 20, b: 10, x: 50 },
      critical: 50,
    },
    {
      name: 'unknown needs ignored',
      jobs: [job('a', ['ghost'], 7), job('b', ['a'], 3)],
      path: { a: 10, b: 3 },
      critical: 10,
    },
    { name: 'no jobs', jobs: [], path: {}, critical: 0 },
  ])('$name', ({ jobs, path, critical }) => {
    expect(Object.fromEntries(remainingPathMs(jobs))).toEqual(path);
    expect(criticalPathMs(jobs)).toBe(critical);
  });

  it('sums a 10,000-job chain', () => {
    const jobs = chain(10_000);
    expect(remainingPathMs(jobs).get('a0')).toBe(10_000);
    expect(remainingPathMs(jobs).get('a9999')).toBe(1);
    expect(criticalPathMs(jobs)).toBe(10_000);
  });
});
