// The Kubernetes Events' pure parts: the low-water bookkeeping a watch goes on with (and a
// variant without it that loses a row), Event names, what a field selector makes a list read,
// the two shapes and the Table. Against PostgreSQL: test/integration/kube-events-low-water.test.ts.
import { describe, expect, it } from 'vitest';
import { afterPoll, lowWaterAt, withBound, type LowWater, type Poll } from '../../src/api/kube/events/low-water.js';
import {
  eventName,
  fromClusterEvent,
  fromHistory,
  parseEventName,
  toCoreEvent,
  toEventsV1,
} from '../../src/api/kube/events/present.js';
import { planOf } from '../../src/api/kube/events/read.js';
import { eventTable } from '../../src/api/kube/events/table.js';
import { formatPosition, parsePosition } from '../../src/api/kube/events/feed.js';
import type { HistoryEventRow } from '../../src/store/events.js';
import type { ClusterEventRow } from '../../src/store/cluster-events.js';

/** Runs polls from `start`, taking the bound each poll sets out from `bounds` in turn; the ids streamed, in order. */
function run(
  advance: (state: LowWater, poll: Poll) => { state: LowWater; fresh: number[] },
  start: LowWater,
  polls: Array<Poll & { bound?: { lastId: number; barrier: bigint } }>,
): { streamed: number[]; state: LowWater } {
  let state = start;
  const streamed: number[] = [];
  for (const { bound, ...poll } of polls) {
    const next = advance(state, poll);
    streamed.push(...next.fresh);
    state = bound ? withBound(next.state, bound) : next.state;
  }
  return { streamed, state };
}

/** The broken variant: goes on from the highest id it has seen. */
function fromHighestSeen(state: LowWater, poll: Poll): { state: LowWater; fresh: number[] } {
  const fresh = poll.ids.filter((id) => id > state.low);
  return { state: { ...state, low: Math.max(state.low, ...fresh) }, fresh };
}

// A (xid 100) took id 7 and commits late; B took id 8 and committed. Each poll reads what has
// committed above the low-water: 8 first, 7 once A commits. The oldest running xid stays at A's
// (100) until A ends.
const LATE_COMMIT: Array<Poll & { bound?: { lastId: number; barrier: bigint } }> = [
  { oldestRunning: null, ids: [8], full: false, bound: { lastId: 8, barrier: 105n } }, // V = 8 read, then B' = 105 taken
  { oldestRunning: 100n, ids: [], full: false }, // A still runs: 100 < 105, the low-water stays
  { oldestRunning: 106n, ids: [7], full: false }, // A committed: 7 streams, the low-water moves to 8
];

describe('low-water', () => {
  it('streams a row that committed after a higher one, once, and only then moves past it', () => {
    const { streamed, state } = run(afterPoll, lowWaterAt(6), LATE_COMMIT);
    expect(streamed).toEqual([8, 7]);
    expect(state).toEqual({ low: 8, streamed: new Set(), bound: null });
  });

  it('broken variant: going on from the highest id seen loses the row that commits late', () => {
    const polls = LATE_COMMIT.map((p) => ({ ...p, ids: p.ids.filter((id) => id > 6) }));
    // The reader asks for ids above its low-water: after 8 it never reads 7.
    const { streamed } = run(
      (state, poll) => fromHighestSeen(state, { ...poll, ids: poll.ids.filter((id) => id > state.low) }),
      lowWaterAt(6),
      polls,
    );
    expect(streamed).toEqual([8]);
  });

  it.each([
    {
      what: 'no bound out',
      state: { low: 5, streamed: new Set([7]), bound: null },
      poll: { oldestRunning: null, ids: [6, 9], full: false },
      low: 5,
      fresh: [6, 9],
      held: [6, 7, 9],
    },
    {
      what: 'a bound not reached yet',
      state: { low: 5, streamed: new Set<number>(), bound: { lastId: 9, barrier: 50n } },
      poll: { oldestRunning: 49n, ids: [6], full: false },
      low: 5,
      fresh: [6],
      held: [6],
    },
    {
      what: 'a bound reached',
      state: { low: 5, streamed: new Set([7]), bound: { lastId: 9, barrier: 50n } },
      poll: { oldestRunning: 50n, ids: [6], full: false },
      low: 9,
      fresh: [6],
      held: [],
    },
    {
      what: 'a bound reached by a full read: only as far as it read',
      state: lowWaterAt(5),
      poll: { oldestRunning: 60n, ids: [6, 7], full: true },
      bound: { lastId: 20, barrier: 50n },
      low: 7,
      fresh: [6, 7],
      held: [],
    },
    {
      what: 'ids above the bound stay held',
      state: { low: 5, streamed: new Set([12]), bound: { lastId: 9, barrier: 50n } },
      poll: { oldestRunning: 51n, ids: [10], full: false },
      low: 9,
      fresh: [10],
      held: [10, 12],
    },
    {
      what: 'an id streamed before is not streamed again',
      state: { low: 5, streamed: new Set([6]), bound: null },
      poll: { oldestRunning: null, ids: [6], full: false },
      low: 5,
      fresh: [],
      held: [6],
    },
  ])('$what', ({ state, poll, bound, low, fresh, held }) => {
    const start = bound ? withBound(state as LowWater, bound) : (state as LowWater);
    const next = afterPoll(start, poll);
    expect(next.fresh).toEqual(fresh);
    expect(next.state.low).toBe(low);
    expect([...next.state.streamed].sort((a, b) => a - b)).toEqual(held);
  });

  it('keeps a reached bound out while a full read has not got to it, and lets go of it once there', () => {
    let state = withBound(lowWaterAt(0), { lastId: 4, barrier: 10n });
    state = afterPoll(state, { oldestRunning: 11n, ids: [1, 2], full: true }).state;
    expect(state).toMatchObject({ low: 2, bound: { lastId: 4 } });
    state = afterPoll(state, { oldestRunning: 11n, ids: [3], full: false }).state;
    expect(state).toMatchObject({ low: 4, bound: null });
  });

  it('sets out a bound only when none is out', () => {
    const out = withBound(lowWaterAt(0), { lastId: 3, barrier: 10n });
    expect(withBound(out, { lastId: 9, barrier: 20n }).bound).toEqual({ lastId: 3, barrier: 10n });
  });
});

describe('positions', () => {
  it.each([
    ['12.7', { history: 12, cluster: 7 }],
    ['0.0', { history: 0, cluster: 0 }],
    ['12', null],
    ['a.b', null],
    ['1.2.3', null],
    ['', null],
  ])('%j', (text, position) => {
    expect(parsePosition(text)).toEqual(position);
    if (position) expect(formatPosition(position)).toBe(text);
  });
});

const AT = new Date('2026-03-01T11:59:30.123Z');
const NOW = new Date('2026-03-01T12:00:00Z');

const history = (fields: Partial<HistoryEventRow>): HistoryEventRow => ({
  id: 42,
  at: AT,
  entity: 'job',
  job_uid: '4f1c2b3a-0000-4000-8000-000000000001',
  job: 'team-a/train',
  assignment: null,
  node: null,
  epoch: 3,
  from_state: 'Pending',
  to_state: 'Running',
  reason: null,
  replica: 'replica-2',
  actor: null,
  ...fields,
});

const nodeDied: ClusterEventRow = {
  id: 9,
  at: AT,
  type: 'Warning',
  reason: 'NodeDied',
  object: 'node/node-7',
  epoch: 3,
  replica: null,
  message: 'node node-7 declared dead: no heartbeat',
};

describe('names', () => {
  it("is the object's name, a dot, the table's digit and the id in 15 hex digits", () => {
    expect(eventName('history', 'train', 42)).toBe('train.000000000000002a');
    expect(eventName('cluster', 'node-7', 9)).toBe('node-7.1000000000000009');
  });

  it.each([
    ['train.000000000000002a', { table: 'history', id: 42 }],
    ['node.with.dots.1000000000000009', { table: 'cluster', id: 9 }],
    ['train.2000000000000009', null],
    ['train.2a', null],
    ['train', null],
  ])('reads back %s', (name, row) => {
    expect(parseEventName(name)).toEqual(row);
  });
});

describe('shapes', () => {
  it('a history row is about its Job, in its namespace, with its node as the related object', () => {
    const event = toCoreEvent(
      fromHistory(
        history({ entity: 'assignment', assignment: 'a-1', node: 'node-1', from_state: 'Running', to_state: 'Lost' }),
      ),
      '42.9',
    );
    expect(event).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: 'train.000000000000002a',
        namespace: 'team-a',
        uid: expect.stringMatching(/^[0-9a-f]{8}-/),
        resourceVersion: '42.9',
        creationTimestamp: '2026-03-01T11:59:30Z',
        annotations: { 'fencer.dev/epoch': '3' },
      },
      involvedObject: {
        apiVersion: 'fencer.dev/v1',
        kind: 'Job',
        namespace: 'team-a',
        name: 'train',
        uid: '4f1c2b3a-0000-4000-8000-000000000001',
      },
      related: { apiVersion: 'fencer.dev/v1', kind: 'Node', name: 'node-1' },
      reason: 'Lost',
      message: 'assignment/a-1 Running → Lost (node node-1, epoch 3)',
      type: 'Warning',
      source: { component: 'fencer', host: 'replica-2' },
      firstTimestamp: '2026-03-01T11:59:30Z',
      lastTimestamp: '2026-03-01T11:59:30Z',
      eventTime: '2026-03-01T11:59:30.123000Z',
      count: 1,
      action: 'Lost',
      reportingComponent: 'fencer',
      reportingInstance: 'replica-2',
    });
  });

  it.each([
    ['Failed', 'Warning'],
    ['Dead', 'Warning'],
    ['Unconfirmed', 'Warning'],
    ['Succeeded', 'Normal'],
    ['Pending', 'Normal'],
  ])('a job that reached %s is %s', (state, type) => {
    expect(fromHistory(history({ to_state: state })).type).toBe(type);
  });

  it('a cluster event is about its Node, without a namespace, and lives in default', () => {
    const event = toEventsV1(fromClusterEvent(nodeDied), '42.9');
    expect(event).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      metadata: { name: 'node-7.1000000000000009', namespace: 'default' },
      regarding: { apiVersion: 'fencer.dev/v1', kind: 'Node', name: 'node-7' },
      note: 'node node-7 declared dead: no heartbeat',
      type: 'Warning',
      reason: 'NodeDied',
      reportingController: 'fencer',
      deprecatedSource: { component: 'fencer' },
      deprecatedCount: 1,
      eventTime: '2026-03-01T11:59:30.123000Z',
    });
    expect(event.regarding).not.toHaveProperty('namespace');
  });

  it("a leader's election is about its Replica", () => {
    const row: ClusterEventRow = {
      ...nodeDied,
      type: 'Normal',
      reason: 'LeaderElected',
      object: 'replica/replica-1',
      replica: 'replica-1',
      message: 'replica-1 leads at epoch 4',
    };
    expect(fromClusterEvent(row).regarding).toEqual({
      apiVersion: 'fencer.dev/v1',
      kind: 'Replica',
      name: 'replica-1',
    });
  });
});

describe('Table', () => {
  it("has kube-apiserver's columns for events, the wide ones at priority 1, and computes the cells", () => {
    const table = eventTable(
      [toCoreEvent(fromHistory(history({})), '1.1'), toEventsV1(fromClusterEvent(nodeDied), '1.1')],
      { now: NOW, includeObject: 'Metadata', version: 'v1' },
    );
    expect(table.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
      ['Last Seen', 0],
      ['Type', 0],
      ['Reason', 0],
      ['Object', 0],
      ['Subobject', 1],
      ['Source', 1],
      ['Message', 0],
      ['First Seen', 1],
      ['Count', 1],
      ['Name', 1],
    ]);
    expect(table.rows.map((r) => r.cells)).toEqual([
      [
        '30s',
        'Normal',
        'Running',
        'job/train',
        '',
        'fencer, replica-2',
        'job Pending → Running (epoch 3)',
        '30s',
        1,
        'train.000000000000002a',
      ],
      [
        '30s',
        'Warning',
        'NodeDied',
        'node/node-7',
        '',
        'fencer',
        'node node-7 declared dead: no heartbeat',
        '30s',
        1,
        'node-7.1000000000000009',
      ],
    ]);
    expect(table.rows[0]!.object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: expect.objectContaining({ name: 'train.000000000000002a', namespace: 'team-a' }),
    });
  });
});

describe('planOf: what a list reads for its field selector', () => {
  const UID = '4f1c2b3a-0000-4000-8000-000000000001';
  it.each([
    {
      what: 'nothing named: recent rows of both tables',
      ns: 'default',
      selector: undefined,
      plan: { history: 'recent', cluster: true },
    },
    {
      what: 'another namespace: no cluster events (they live in default)',
      ns: 'team-a',
      selector: undefined,
      plan: { history: 'recent', cluster: false },
    },
    {
      what: 'kubectl describe fj: the job by its uid',
      ns: 'team-a',
      selector: `involvedObject.namespace=team-a,involvedObject.kind=Job,involvedObject.uid=${UID},involvedObject.name=train`,
      plan: { history: { uid: UID }, cluster: false },
    },
    {
      what: 'kubectl events --for fj/NAME: the job by its name',
      ns: 'team-a',
      selector: 'involvedObject.kind=Job,involvedObject.apiVersion=fencer.dev/v1,involvedObject.name=train',
      plan: { history: { job: { namespace: 'team-a', name: 'train' } }, cluster: false },
    },
    {
      what: "events.k8s.io's regarding.*",
      ns: null,
      selector: 'regarding.kind=Job,regarding.name=train,regarding.namespace=team-a',
      plan: { history: { job: { namespace: 'team-a', name: 'train' } }, cluster: false },
    },
    {
      what: 'kubectl describe fno: a Node, cluster-scoped',
      ns: null,
      selector: 'involvedObject.namespace=,involvedObject.kind=Node,involvedObject.name=node-7',
      plan: { history: null, cluster: true },
    },
    {
      what: 'a kind of another group',
      ns: 'default',
      selector: 'involvedObject.apiVersion=v1,involvedObject.kind=Pod',
      plan: { history: null, cluster: false },
    },
    {
      what: 'a uid that is not one',
      ns: 'default',
      selector: 'involvedObject.uid=nope',
      plan: { history: null, cluster: false },
    },
    {
      what: 'a name in all namespaces: recent rows, selected by name',
      ns: null,
      selector: 'involvedObject.name=train',
      plan: { history: 'recent', cluster: true },
    },
    {
      what: '!= narrows nothing',
      ns: 'default',
      selector: 'involvedObject.kind!=Job,type=Warning',
      plan: { history: 'recent', cluster: true },
    },
  ])('$what', ({ ns, selector, plan }) => {
    expect(planOf(ns, selector)).toEqual(plan);
  });
});
