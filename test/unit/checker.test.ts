// The chaos checker on synthetic histories and run logs: a clean run passes, and each broken
// promise is reported as a concrete case.
import { describe, expect, it } from 'vitest';
import { check, type HistoryRow } from '../../src/checker/check.js';
import type { RunLogLine } from '../../src/agent/run-log.js';

const T0 = Date.parse('2025-01-31T12:00:00.000Z');
const UID = 'uid-1';
const JOB = 'default/train';

/** A history built row by row, ids increasing, `at` in ms after T0. */
class History {
  rows: HistoryRow[] = [];
  private due: number | null = T0;

  job(at: number, from: string | null, to: string, extra: Partial<HistoryRow> = {}): this {
    if (extra.dueAt !== undefined) this.due = extra.dueAt;
    return this.push({ entity: 'job', at: T0 + at, fromState: from, toState: to, dueAt: this.due, ...extra });
  }

  asg(at: number, id: string, node: string, from: string | null, to: string, extra: Partial<HistoryRow> = {}): this {
    return this.push({
      entity: 'assignment',
      at: T0 + at,
      assignment: id,
      node,
      fromState: from,
      toState: to,
      epoch: 3,
      ...extra,
    });
  }

  /** Submitted at `at`, placed on `node` as `id`, started and finished. */
  completed(at: number, id: string, node: string, ranFor: number): this {
    return this.job(at, null, 'Pending')
      .place(at + 10, id, node)
      .start(at + 20, id, node)
      .asg(at + 20 + ranFor, id, node, 'Running', 'Succeeded')
      .job(at + 20 + ranFor, 'Running', 'Succeeded', { assignment: id, node, reason: 'Completed' });
  }

  place(at: number, id: string, node: string): this {
    return this.job(at, 'Pending', 'Assigned', { assignment: id, node, epoch: 3 }).asg(at, id, node, null, 'Assigned');
  }

  start(at: number, id: string, node: string): this {
    return this.asg(at, id, node, 'Assigned', 'Running').job(at, 'Assigned', 'Running', { assignment: id, node });
  }

  private push(row: Partial<HistoryRow>): this {
    this.rows.push({
      id: this.rows.length + 1,
      at: T0,
      entity: 'job',
      jobUid: UID,
      job: JOB,
      assignment: null,
      node: null,
      epoch: null,
      fromState: null,
      toState: 'Pending',
      reason: null,
      replica: 'replica-1',
      dueAt: null,
      ...row,
    });
    return this;
  }
}

function line(
  event: RunLogLine['event'],
  at: number,
  assignment: string,
  node: string,
  extra: Partial<RunLogLine> = {},
): RunLogLine {
  return {
    event,
    node,
    assignment,
    job: JOB,
    jobUid: UID,
    epoch: 3,
    attempt: 1,
    ...(event === 'start' ? {} : { reason: event === 'stop' ? 'completed' : 'stale-epoch' }),
    wallTime: new Date(T0 + at).toISOString(),
    wallMs: T0 + at,
    monoNs: String(BigInt(1_000_000 + at) * 1_000_000n),
    pid: 100,
    ...extra,
  };
}

describe('check', () => {
  it('passes a clean run and counts what it saw', () => {
    const h = new History().completed(0, 'a1', 'node-1', 1000);
    const runs = [
      line('start', 15, 'a1', 'node-1'),
      line('stop', 1015, 'a1', 'node-1'),
      line('reject', 20, 'a0', 'node-2', { epoch: 2 }),
    ];
    const report = check({ history: h.rows, runs });
    expect(report.ok).toBe(true);
    expect(report).toMatchObject({
      placedTwice: [],
      overlappingRuns: [],
      lost: [],
      early: [],
      finished: { Succeeded: 1 },
    });
    expect(report.counts).toMatchObject({
      jobs: 1,
      assignments: 1,
      runs: 1,
      rejected: 1,
      selfFencedStops: 0,
      runsWithoutEnd: 0,
    });
  });

  it('catches a job placed twice, naming both assignments and nodes', () => {
    const h = new History()
      .job(0, null, 'Pending')
      .place(10, 'a1', 'node-1')
      .asg(20, 'a2', 'node-2', null, 'Assigned', { epoch: 2 });
    h.asg(500, 'a1', 'node-1', 'Assigned', 'Succeeded')
      .asg(600, 'a2', 'node-2', 'Assigned', 'Lost')
      .job(600, 'Assigned', 'Succeeded');
    const report = check({ history: h.rows, runs: [] });
    expect(report.ok).toBe(false);
    expect(report.placedTwice).toHaveLength(1);
    const [twice] = report.placedTwice;
    expect(twice).toMatchObject({ job: JOB, jobUid: UID, at: { ms: T0 + 20 } });
    expect(twice!.active.map((a) => [a.assignment, a.node])).toEqual([
      ['a1', 'node-1'],
      ['a2', 'node-2'],
    ]);
  });

  it('replays in history order (at, then id), whatever order the rows come in', () => {
    const h = new History()
      .job(0, null, 'Pending')
      .place(10, 'a1', 'node-1')
      .asg(100, 'a1', 'node-1', 'Assigned', 'Lost');
    h.job(100, 'Assigned', 'Pending')
      .place(200, 'a2', 'node-2')
      .asg(300, 'a2', 'node-2', 'Assigned', 'Succeeded')
      .job(300, 'Assigned', 'Succeeded');
    expect(check({ history: [...h.rows].reverse(), runs: [] }).ok).toBe(true);
  });

  it('catches two runs of a job on two nodes at overlapping times', () => {
    const h = new History()
      .job(0, null, 'Pending')
      .place(10, 'a1', 'node-1')
      .asg(20, 'a1', 'node-1', 'Assigned', 'Lost');
    h.job(20, 'Assigned', 'Pending')
      .place(30, 'a2', 'node-2')
      .asg(3000, 'a2', 'node-2', 'Assigned', 'Succeeded')
      .job(3000, 'Assigned', 'Succeeded');
    const runs = [
      line('start', 12, 'a1', 'node-1'),
      line('stop', 2000, 'a1', 'node-1', { reason: 'self-fence' }), // stopped too late
      line('start', 40, 'a2', 'node-2', { pid: 200, attempt: 2 }),
      line('stop', 2990, 'a2', 'node-2', { pid: 200, attempt: 2 }),
    ];
    const report = check({ history: h.rows, runs });
    expect(report.placedTwice).toEqual([]);
    expect(report.overlappingRuns).toHaveLength(1);
    const [overlap] = report.overlappingRuns;
    expect(overlap!.runs.map((r) => [r.assignment, r.node, r.end.by])).toEqual([
      ['a1', 'node-1', 'stop'],
      ['a2', 'node-2', 'stop'],
    ]);
    expect(overlap!.overlapMs).toBe(2000 - 40);
    expect(report.counts.selfFencedStops).toBe(1);
  });

  describe('a start without a stop (the agent was SIGKILLed)', () => {
    // a1 on node-1 is started, the agent dies without a stop line; node-1 is declared dead at
    // 5000 (a1 Lost) and the job runs again as a2 on node-2.
    function rerun(a2StartsAt: number): { history: HistoryRow[]; runs: RunLogLine[] } {
      const h = new History().job(0, null, 'Pending').place(10, 'a1', 'node-1').start(20, 'a1', 'node-1');
      h.asg(5000, 'a1', 'node-1', 'Running', 'Lost').job(5000, 'Running', 'Pending', { reason: 'NodeDied' });
      h.place(a2StartsAt - 10, 'a2', 'node-2').start(a2StartsAt + 5, 'a2', 'node-2');
      h.asg(a2StartsAt + 1000, 'a2', 'node-2', 'Running', 'Succeeded').job(a2StartsAt + 1000, 'Running', 'Succeeded');
      const runs = [
        line('start', 15, 'a1', 'node-1'),
        line('start', a2StartsAt, 'a2', 'node-2', { pid: 200, attempt: 2 }),
        line('stop', a2StartsAt + 990, 'a2', 'node-2', { pid: 200, attempt: 2 }),
      ];
      return { history: h.rows, runs };
    }

    it('ends at the time the history took the assignment out of the active states: a rerun after it is not flagged', () => {
      const report = check(rerun(5100));
      expect(report.ok).toBe(true);
      expect(report.counts).toMatchObject({ runs: 2, runsEndedByHistory: 1, runsWithoutEnd: 0 });
    });

    it('is flagged when another run starts before that time', () => {
      // a1's agent died without a stop line; a2 started on node-2 at 3000, before a1 was Lost at 5000
      const h = new History().job(0, null, 'Pending').place(10, 'a1', 'node-1').start(20, 'a1', 'node-1');
      h.asg(2990, 'a2', 'node-2', null, 'Assigned').asg(5000, 'a1', 'node-1', 'Running', 'Lost');
      h.asg(6000, 'a2', 'node-2', 'Assigned', 'Succeeded').job(6000, 'Running', 'Succeeded');
      const runs = [
        line('start', 15, 'a1', 'node-1'),
        line('start', 3000, 'a2', 'node-2', { pid: 200 }),
        line('stop', 5990, 'a2', 'node-2', { pid: 200 }),
      ];
      const report = check({ history: h.rows, runs });
      expect(report.placedTwice).toHaveLength(1);
      expect(report.overlappingRuns).toHaveLength(1);
      const [overlap] = report.overlappingRuns;
      expect(overlap!.runs[0]).toMatchObject({
        assignment: 'a1',
        node: 'node-1',
        end: { by: 'history', state: 'Lost', at: { ms: T0 + 5000 } },
      });
      expect(overlap!.runs[1]).toMatchObject({
        assignment: 'a2',
        node: 'node-2',
        end: { by: 'stop', reason: 'completed' },
      });
      expect(overlap!.overlapMs).toBe(5000 - 3000);
    });

    it('without a Lost row either, runs on and overlaps any later run', () => {
      const h = new History().job(0, null, 'Pending').place(10, 'a1', 'node-1').start(20, 'a1', 'node-1');
      h.job(9000, 'Running', 'Succeeded'); // whatever the job did, a1 never left Running in the history
      const runs = [
        line('start', 15, 'a1', 'node-1'),
        line('start', 60_000, 'a2', 'node-2', { pid: 200 }),
        line('stop', 61_000, 'a2', 'node-2', { pid: 200 }),
      ];
      const report = check({ history: h.rows, runs });
      expect(report.counts.runsWithoutEnd).toBe(1);
      expect(report.overlappingRuns).toHaveLength(1);
      expect(report.overlappingRuns[0]!.runs[0].end).toEqual({ by: 'none', at: null });
      expect(report.overlappingRuns[0]!.overlapMs).toBe(1000);
    });

    it('two starts of one assignment by two pids of a node (agent restarted) are two runs', () => {
      const h = new History().job(0, null, 'Pending').place(10, 'a1', 'node-1').start(20, 'a1', 'node-1');
      h.asg(3000, 'a1', 'node-1', 'Running', 'Succeeded').job(3000, 'Running', 'Succeeded');
      const runs = [
        line('start', 15, 'a1', 'node-1'),
        line('start', 500, 'a1', 'node-1', { pid: 101 }),
        line('stop', 2990, 'a1', 'node-1', { pid: 101 }),
      ];
      const report = check({ history: h.rows, runs });
      expect(report.counts.runs).toBe(2);
      expect(report.overlappingRuns).toHaveLength(1);
      expect(report.overlappingRuns[0]!.runs.map((r) => r.pid)).toEqual([100, 101]);
    });
  });

  it('does not flag reruns after a node death that do not overlap', () => {
    const h = new History().job(0, null, 'Pending').place(10, 'a1', 'node-1').start(20, 'a1', 'node-1');
    h.asg(4000, 'a1', 'node-1', 'Running', 'Lost').job(4000, 'Running', 'Pending', { reason: 'NodeDied' });
    h.place(4100, 'a2', 'node-2').start(4120, 'a2', 'node-2');
    h.asg(5200, 'a2', 'node-2', 'Running', 'Succeeded').job(5200, 'Running', 'Succeeded', { reason: 'Completed' });
    const runs = [
      line('start', 15, 'a1', 'node-1'),
      line('stop', 3100, 'a1', 'node-1', { reason: 'self-fence' }), // cut off: it fenced itself first
      line('start', 4110, 'a2', 'node-2', { pid: 200, attempt: 2 }),
      line('stop', 5110, 'a2', 'node-2', { pid: 200, attempt: 2 }),
    ];
    const report = check({ history: h.rows, runs });
    expect(report.ok).toBe(true);
    expect(report.counts).toMatchObject({ runs: 2, assignments: 2, selfFencedStops: 1 });
    expect(report.finished).toEqual({ Succeeded: 1 });
  });

  it('catches a lost job: accepted, but its last job row is not terminal', () => {
    const done = new History().completed(0, 'a1', 'node-1', 100).rows;
    const stuck = new History()
      .job(0, null, 'Pending')
      .place(10, 'a9', 'node-3')
      .rows.map((r) => ({ ...r, id: r.id + 100, jobUid: 'uid-2', job: 'default/stuck' }));
    const report = check({ history: [...done, ...stuck], runs: [] });
    expect(report.lost).toEqual([
      {
        job: 'default/stuck',
        jobUid: 'uid-2',
        lastState: 'Assigned',
        lastAt: { ms: T0 + 10, iso: new Date(T0 + 10).toISOString() },
        assignment: 'a9',
        node: 'node-3',
      },
    ]);
    expect(report.counts.jobs).toBe(2);
    expect(report.finished).toEqual({ Succeeded: 1 });
  });

  it('counts Deleted, Dead, Skipped, Cancelled and Failed as finished', () => {
    const states = ['Deleted', 'Dead', 'Skipped', 'Cancelled', 'Failed'];
    const history = states.flatMap((state, i) =>
      new History()
        .job(0, null, 'Pending')
        .job(10, 'Pending', state)
        .rows.map((r) => ({ ...r, id: r.id + 10 * i, jobUid: `uid-${state}` })),
    );
    const report = check({ history, runs: [] });
    expect(report.ok).toBe(true);
    expect(report.finished).toEqual(Object.fromEntries(states.map((s) => [s, 1])));
  });

  it('catches a job placed before it was due, using the due_at in force for that attempt', () => {
    // first attempt due at T0, placed on time and Lost; retried with a backoff to T0+10s but placed at T0+5s
    const h = new History()
      .job(0, null, 'Pending')
      .place(10, 'a1', 'node-1')
      .asg(100, 'a1', 'node-1', 'Assigned', 'Lost');
    h.job(100, 'Assigned', 'Pending', { dueAt: T0 + 10_000 }).place(5000, 'a2', 'node-2');
    h.asg(11_000, 'a2', 'node-2', 'Assigned', 'Succeeded').job(11_000, 'Assigned', 'Succeeded');
    const report = check({ history: h.rows, runs: [] });
    expect(report.early).toEqual([
      expect.objectContaining({
        kind: 'placed',
        assignment: 'a2',
        node: 'node-2',
        at: { ms: T0 + 5000, iso: expect.any(String) },
        dueAt: expect.objectContaining({ ms: T0 + 10_000 }),
        earlyByMs: 5000,
      }),
    ]);
    expect(report.ok).toBe(false);
  });

  it('catches a job started before it was due', () => {
    const h = new History()
      .job(0, null, 'Pending', { dueAt: T0 + 1000 })
      .place(1000, 'a1', 'node-1')
      .start(1020, 'a1', 'node-1');
    h.asg(2000, 'a1', 'node-1', 'Running', 'Succeeded').job(2000, 'Running', 'Succeeded');
    const runs = [line('start', 900, 'a1', 'node-1'), line('stop', 1990, 'a1', 'node-1')];
    const report = check({ history: h.rows, runs });
    expect(report.placedTwice).toEqual([]);
    expect(report.early).toEqual([
      expect.objectContaining({ kind: 'started', assignment: 'a1', node: 'node-1', pid: 100, earlyByMs: 100 }),
    ]);
  });

  describe('a node never runs more than it has (its own log)', () => {
    const sized = (cpuMillis: number) => ({ cpuMillis, memoryBytes: 1024, nodeCpuMillis: 2000, nodeMemoryBytes: 4096 });
    const runOf = (assignment: string, job: string, from: number, to: number, cpuMillis: number, node = 'node-1') => [
      line('start', from, assignment, node, { job, jobUid: job, ...sized(cpuMillis) }),
      line('stop', to, assignment, node, { job, jobUid: job }),
    ];

    it('passes runs that fit, also back to back', () => {
      const runs = [
        ...runOf('a1', 'j1', 0, 1000, 1000),
        ...runOf('a2', 'j2', 500, 1500, 1000),
        ...runOf('a3', 'j3', 1000, 2000, 1000),
      ];
      expect(check({ history: [], runs }).overcommitted).toEqual([]);
    });

    it('catches the instant a third run starts on a full node, once per episode', () => {
      const runs = [
        ...runOf('a1', 'j1', 0, 1000, 1000),
        ...runOf('a2', 'j2', 100, 1000, 1000),
        ...runOf('a3', 'j3', 200, 300, 500),
        ...runOf('a4', 'j4', 250, 350, 500),
        ...runOf('a5', 'j5', 200, 300, 1500, 'node-2'),
      ];
      const report = check({ history: [], runs });
      expect(report.overcommitted).toEqual([
        expect.objectContaining({
          node: 'node-1',
          at: expect.objectContaining({ ms: T0 + 200 }),
          cpuMillis: 2500,
          capacity: { cpuMillis: 2000, memoryBytes: 4096 },
        }),
      ]);
      expect(report.overcommitted[0]!.running.map((r) => r.assignment).sort()).toEqual(['a1', 'a2', 'a3']);
      expect(report.ok).toBe(false);
    });

    it('catches more runs at once than the node holds (--max-jobs), whatever their size', () => {
      const tiny = (assignment: string, from: number, to: number) => [
        line('start', from, assignment, 'node-1', { job: assignment, jobUid: assignment, ...sized(1), nodeMaxJobs: 2 }),
        line('stop', to, assignment, 'node-1', { job: assignment, jobUid: assignment }),
      ];
      expect(
        check({ history: [], runs: [...tiny('a1', 0, 100), ...tiny('a2', 50, 150), ...tiny('a3', 100, 200)] })
          .overcommitted,
      ).toEqual([]);
      const report = check({
        history: [],
        runs: [...tiny('a1', 0, 100), ...tiny('a2', 50, 150), ...tiny('a3', 60, 200)],
      });
      expect(report.overcommitted).toEqual([
        expect.objectContaining({
          node: 'node-1',
          at: expect.objectContaining({ ms: T0 + 60 }),
          capacity: { cpuMillis: 2000, memoryBytes: 4096, maxJobs: 2 },
        }),
      ]);
    });
  });
});

describe('needs', () => {
  /** A need (default/build) and its dependent (default/test), each with its own uid. */
  function pipeline(testPlacedAt: number, opts: { buildFails?: boolean } = {}): HistoryRow[] {
    const build = new History()
      .completed(0, 'a-build', 'n1', 100)
      .rows.map((r) => ({ ...r, jobUid: 'uid-build', job: 'default/build' }));
    if (opts.buildFails) {
      const last = build[build.length - 1]!;
      last.toState = 'Failed';
    }
    const test = new History()
      .job(0, null, 'Pending', { needs: ['build'] })
      .place(testPlacedAt, 'a-test', 'n2')
      .rows.map((r) => ({ ...r, id: r.id + 100, jobUid: 'uid-test', job: 'default/test' }));
    return [...build, ...test];
  }

  it('passes a job placed after every need succeeded', () => {
    const report = check({ history: pipeline(200), runs: [] });
    expect(report.unmetNeeds).toEqual([]);
  });

  it('catches a job placed while a need still ran, or after it failed', () => {
    const early = check({ history: pipeline(50), runs: [] });
    expect(early.unmetNeeds).toMatchObject([
      { job: 'default/test', assignment: 'a-test', need: 'default/build', needState: 'Running' },
    ]);
    expect(early.ok).toBe(false);
    const failed = check({ history: pipeline(200, { buildFails: true }), runs: [] });
    expect(failed.unmetNeeds).toMatchObject([{ need: 'default/build', needState: 'Failed' }]);
  });
});

describe('queue limits, from the nodes’ logs', () => {
  // Three jobs of queue default/q, each run on its own node between the given times.
  function queueRuns(spans: Array<[number, number]>) {
    const history: HistoryRow[] = [];
    const runs: RunLogLine[] = [];
    spans.forEach(([from, to], i) => {
      const uid = `uid-q${i}`;
      const job = `default/q${i}`;
      const rows = new History()
        .job(0, null, 'Pending', { queue: 'default/q' })
        .place(from - 5, `a${i}`, `node-${i}`)
        .start(from, `a${i}`, `node-${i}`)
        .rows.map((r) => ({ ...r, id: r.id + 100 * i, jobUid: uid, job }));
      history.push(...rows);
      const extra = {
        jobUid: uid,
        job,
        cpuMillis: 1000,
        memoryBytes: 1024,
        nodeCpuMillis: 4000,
        nodeMemoryBytes: 4096,
      };
      runs.push(line('start', from, `a${i}`, `node-${i}`, extra), line('stop', to, `a${i}`, `node-${i}`, extra));
    });
    return { history, runs };
  }
  const limit = { queue: 'default/q', concurrencyLimit: 2, cpuMillis: null, memoryBytes: null };

  it('passes when at no instant more runs than the limit (a run ending as another starts is not overlap)', () => {
    const report = check({
      ...queueRuns([
        [10, 100],
        [20, 50],
        [50, 80],
      ]),
      queueLimits: [limit],
    });
    expect(report.overQueueLimit).toEqual([]);
  });

  it('catches three runs at once under a limit of two, and a CPU limit', () => {
    const over = check({
      ...queueRuns([
        [10, 100],
        [20, 60],
        [50, 80],
      ]),
      queueLimits: [limit],
    });
    expect(over.overQueueLimit).toMatchObject([{ queue: 'default/q', running: 3 }]);
    expect(over.ok).toBe(false);
    const cpu = check({
      ...queueRuns([
        [10, 100],
        [20, 60],
      ]),
      queueLimits: [{ ...limit, concurrencyLimit: null, cpuMillis: 1500 }],
    });
    expect(cpu.overQueueLimit).toMatchObject([{ queue: 'default/q', cpuMillis: 2000 }]);
  });

  it('ignores queues without limits', () => {
    expect(
      check({
        ...queueRuns([
          [10, 100],
          [20, 60],
          [50, 80],
        ]),
        queueLimits: [],
      }).overQueueLimit,
    ).toEqual([]);
  });
});

describe('namespace quotas, from the nodes’ logs', () => {
  it('catches a namespace holding more CPU than its quota across queues', () => {
    const history: HistoryRow[] = [];
    const runs: RunLogLine[] = [];
    [
      ['default/a', 10, 100],
      ['default/b', 20, 60],
      ['other/c', 30, 70],
    ].forEach(([queue, from, to], i) => {
      const uid = `uid-n${i}`;
      const job = `${(queue as string).split('/')[0]}/n${i}`;
      history.push(
        ...new History()
          .job(0, null, 'Pending', { queue: queue as string })
          .rows.map((r) => ({ ...r, id: r.id + 100 * i, jobUid: uid, job })),
      );
      const extra = {
        jobUid: uid,
        job,
        cpuMillis: 1000,
        memoryBytes: 1024,
        nodeCpuMillis: 4000,
        nodeMemoryBytes: 4096,
      };
      runs.push(
        line('start', from as number, `a${i}`, `node-${i}`, extra),
        line('stop', to as number, `a${i}`, `node-${i}`, extra),
      );
    });
    const quota = {
      queue: 'default',
      scope: 'namespace' as const,
      concurrencyLimit: null,
      cpuMillis: 1500,
      memoryBytes: null,
    };
    expect(check({ history, runs, queueLimits: [quota] }).overQueueLimit).toMatchObject([
      { queue: 'default', cpuMillis: 2000 },
    ]);
    expect(check({ history, runs, queueLimits: [{ ...quota, cpuMillis: 2000 }] }).overQueueLimit).toEqual([]);
  });
});
