// What fencer prints for queues, quotas and namespaces (pure functions of the objects and a clock),
// and the presenters that make those objects from rows: a queue's AtLimit condition, a pending
// job's waiting reasons as a pod's Scheduled False.
import { describe, expect, it } from 'vitest';
import type { Queue, ResourceQuota } from '../../src/domain/resources.js';
import type { NamespaceResource } from '../../src/domain/namespace.js';
import {
  describeNamespace,
  describeQueue,
  describeResourceQuota,
  renderQueues,
  renderResourceQuotas,
} from '../../src/cli/queue-output.js';
import { presentJob, presentNamespace, presentQueue, presentResourceQuota } from '../../src/api/present.js';
import type { QueueRow, QuotaRow } from '../../src/fair-share/store.js';
import type { JobRow } from '../../src/store/rows.js';

const now = new Date('2026-12-01T12:00:00Z');
const ago = (seconds: number): Date => new Date(now.getTime() - seconds * 1000);
const GI = 1024 ** 3;

function queueRow(over: Partial<QueueRow>): QueueRow {
  return {
    uid: 'u-1',
    namespace: 'team-a',
    name: 'batch',
    labels: {},
    spec: { weight: 3, concurrencyLimit: 2, resourceLimit: { cpu: '4' }, lanes: 'weighted' },
    weight: 3,
    concurrency_limit: 2,
    cpu_limit_millis: 4000,
    memory_limit_bytes: null,
    strict_lanes: false,
    created_at: ago(3600),
    updated_at: ago(60),
    resource_version: 2,
    watch_rv: null,
    annotations: {},
    running: 1,
    allocated_cpu_millis: 1500,
    allocated_memory_bytes: 2 * GI,
    pending: 4,
    oldest_pending_name: 'render-7',
    oldest_pending_at: ago(200),
    ...over,
  };
}

function quotaRow(over: Partial<QuotaRow> = {}): QuotaRow {
  return {
    uid: 'u-2',
    namespace: 'team-a',
    name: 'team-a-quota',
    labels: {},
    spec: { hard: { pendingJobs: 10, cpu: 8, memory: '16Gi' }, placementRate: { perSecond: 5, burst: 10 } },
    pending_jobs: 10,
    cpu_limit_millis: 8000,
    memory_limit_bytes: 16 * GI,
    rate_per_second: 5,
    rate_burst: 10,
    created_at: ago(7200),
    updated_at: ago(7200),
    resource_version: 1,
    watch_rv: null,
    annotations: {},
    pending: 5,
    allocated_cpu_millis: 2000,
    allocated_memory_bytes: 4 * GI,
    oldest_pending_name: 'render-7',
    oldest_pending_at: ago(200),
    ...over,
  };
}

describe('presentQueue', () => {
  it('shows what the queue holds and what waits, and AtLimit False within its limits', () => {
    expect(presentQueue(queueRow({}), now)).toEqual({
      apiVersion: 'fencer.dev/v1',
      kind: 'Queue',
      metadata: {
        name: 'batch',
        namespace: 'team-a',
        labels: {},
        uid: 'u-1',
        creationTimestamp: ago(3600).toISOString(),
        resourceVersion: '2',
      },
      spec: { weight: 3, concurrencyLimit: 2, resourceLimit: { cpu: '4' }, lanes: 'weighted' },
      status: {
        running: 1,
        allocated: { cpu: '1500m', memory: '2Gi' },
        pending: 4,
        oldestPendingTime: ago(200).toISOString(),
        conditions: [
          {
            type: 'AtLimit',
            status: 'False',
            reason: 'WithinLimits',
            message: 'the queue may place more jobs',
            lastTransitionTime: now.toISOString(),
          },
        ],
      },
    });
  });

  it.each([
    [{ running: 2 }, 'True', 'ConcurrencyLimit', '2 jobs placed, spec.concurrencyLimit 2'],
    [{ allocated_cpu_millis: 4000 }, 'True', 'ResourceLimit', 'its placed jobs hold 4 of 4 CPU (spec.resourceLimit)'],
    [
      { memory_limit_bytes: 2 * GI },
      'True',
      'ResourceLimit',
      'its placed jobs hold 2Gi of 2Gi memory (spec.resourceLimit)',
    ],
    [
      { concurrency_limit: null, cpu_limit_millis: null },
      'False',
      'NoLimits',
      'the queue has no concurrency or resource limit',
    ],
  ] as const)('%j: AtLimit %s %s', (over, status, reason, message) => {
    expect(presentQueue(queueRow(over), now).status?.conditions).toEqual([
      { type: 'AtLimit', status, reason, message, lastTransitionTime: now.toISOString() },
    ]);
  });

  it('leaves oldestPendingTime out when nothing waits', () => {
    expect(
      presentQueue(queueRow({ pending: 0, oldest_pending_name: null, oldest_pending_at: null }), now).status,
    ).not.toHaveProperty('oldestPendingTime');
  });
});

describe('presentResourceQuota', () => {
  it('shows the use against the hard limits; AtLimit True on the pending cap (submits refused)', () => {
    expect(presentResourceQuota(quotaRow(), now).status).toEqual({
      used: { pendingJobs: 5, cpu: '2', memory: '4Gi' },
      conditions: [
        {
          type: 'AtLimit',
          status: 'False',
          reason: 'WithinLimits',
          message: 'the namespace may take and place more jobs',
          lastTransitionTime: now.toISOString(),
        },
      ],
    });
    expect(presentResourceQuota(quotaRow({ pending: 10 }), now).status?.conditions[0]).toMatchObject({
      status: 'True',
      reason: 'PendingJobs',
    });
    expect(
      presentResourceQuota(quotaRow({ allocated_memory_bytes: 16 * GI }), now).status?.conditions[0],
    ).toMatchObject({ status: 'True', reason: 'ResourceLimit' });
  });
});

describe('presentJob', () => {
  const pending: JobRow = {
    uid: 'j-1',
    namespace: 'team-a',
    name: 'render-7',
    labels: {},
    spec: { resources: { cpu: '1', memory: '1Gi' }, duration: '1m', queue: 'batch' },
    cpu_millis: 1000,
    memory_bytes: GI,
    duration_ms: 60_000,
    node_selector: {},
    max_attempts: 3,
    phase: 'Pending',
    attempt: 0,
    disruptions: 0,
    due_at: new Date('2000-01-01T00:00:00Z'), // due long ago, whatever the machine's clock says
    assignment_id: null,
    node: null,
    epoch: null,
    reason: null,
    message: null,
    created_at: ago(300),
    updated_at: ago(10),
    started_at: null,
    finished_at: null,
    resource_version: 3,
    watch_rv: null,
    annotations: {},
    workflow_uid: null,
    cronjob_uid: null,
    needs: [],
    waiting: false,
    path_ms: 60_000,
    image: null,
    pool: null,
    retry_policy: 'OnFailure',
    backoff_base_ms: 1000,
    backoff_cap_ms: 300_000,
  };

  it.each(['Unschedulable', 'QueueAtLimit', 'QuotaExceeded', 'WaitingForShare'])(
    'shows a pending job waiting for %s as Scheduled False, with the message',
    (reason) => {
      const job = presentJob({ ...pending, reason, message: 'why it waits' });
      expect(job.status?.conditions).toEqual([
        {
          type: 'Scheduled',
          status: 'False',
          reason,
          message: 'why it waits',
          lastTransitionTime: ago(10).toISOString(),
        },
      ]);
    },
  );
});

describe('get queues', () => {
  const queues = [
    presentQueue(queueRow({}), now),
    presentQueue(
      queueRow({
        name: 'default',
        spec: { weight: 1, lanes: 'strict' },
        weight: 1,
        concurrency_limit: null,
        cpu_limit_millis: null,
        running: 0,
        allocated_cpu_millis: 0,
        allocated_memory_bytes: 0,
        pending: 0,
        oldest_pending_at: null,
        oldest_pending_name: null,
      }),
      now,
    ),
  ];

  it('prints the CRD printer columns', () => {
    expect(renderQueues(queues, { format: 'table', now })).toBe(
      [
        'NAME      WEIGHT   LIMIT    RUNNING   PENDING   AGE',
        'batch     3        2        1         4         60m',
        'default   1        <none>   0         0         60m',
        '',
      ].join('\n'),
    );
  });

  it('wide: what is held against the resource limit, lanes, the oldest wait and the limit reached; -A: namespaces', () => {
    const wide = renderQueues(queues, { format: 'wide', now, allNamespaces: true }).split('\n');
    expect(wide[0]).toMatch(
      /^NAMESPACE\s+NAME\s+WEIGHT\s+LIMIT\s+RUNNING\s+PENDING\s+AGE\s+CPU\s+MEMORY\s+LANES\s+OLDEST-PENDING\s+AT-LIMIT$/,
    );
    expect(wide[1]).toMatch(/^team-a\s+batch\s+3\s+2\s+1\s+4\s+60m\s+1500m\/4\s+2Gi\s+weighted\s+3m20s\s+no$/);
    expect(wide[2]).toMatch(/^team-a\s+default\s+1\s+<none>\s+0\s+0\s+60m\s+0\s+0\s+strict\s+<none>\s+no$/);
  });

  it('json and yaml: the QueueList', () => {
    expect(JSON.parse(renderQueues(queues, { format: 'json', now }))).toEqual({
      apiVersion: 'fencer.dev/v1',
      kind: 'QueueList',
      items: queues,
    });
    expect(renderQueues([queues[0]!], { format: 'name', now })).toBe('queue.fencer.dev/batch\n');
  });
});

describe('get resourcequotas', () => {
  it('prints each limit as used/hard and the placement rate', () => {
    const quotas: ResourceQuota[] = [presentResourceQuota(quotaRow(), now)];
    expect(renderResourceQuotas(quotas, { format: 'table', now })).toBe(
      [
        'NAME           PENDING   CPU   MEMORY     RATE            AGE',
        'team-a-quota   5/10      2/8   4Gi/16Gi   5/s, burst 10   120m',
        '',
      ].join('\n'),
    );
  });
});

describe('describe', () => {
  it('a queue: its use against each limit, the oldest wait, AtLimit', () => {
    const queue: Queue = presentQueue(queueRow({ running: 2 }), now);
    expect(describeQueue(queue, now)).toBe(
      [
        'Name:           batch',
        'Namespace:      team-a',
        'Labels:         <none>',
        `Created:        ${ago(3600).toISOString()} (60m ago)`,
        'Weight:         3',
        'Lanes:          weighted (high 70 %, normal 20 %, low 10 %)',
        'Running:        2 of 2 (100 %)',
        'CPU:            1500m of 4 (38 %)',
        'Memory:         2Gi (no limit)',
        'Pending:        4',
        `Oldest Pending: waiting 3m20s (since ${ago(200).toISOString()})`,
        'Conditions:',
        '  Type      Status   Reason             Message',
        '  ----      ------   ------             -------',
        '  AtLimit   True     ConcurrencyLimit   2 jobs placed, spec.concurrencyLimit 2',
        '',
      ].join('\n'),
    );
  });

  it('a resource quota', () => {
    const out = describeResourceQuota(presentResourceQuota(quotaRow(), now), now);
    expect(out).toContain('Pending Jobs:   5 of 10 (50 %)\n');
    expect(out).toContain('CPU:            2 of 8 (25 %)\n');
    expect(out).toContain('Memory:         4Gi of 16Gi (25 %)\n');
    expect(out).toContain('Placement Rate: 5/s, burst 10\n');
  });

  it('a namespace: use against its quota, the job that waited longest and how long, each queue', () => {
    const namespace: NamespaceResource = presentNamespace(
      'team-a',
      {
        pending: 5,
        running: 3,
        allocated_cpu_millis: 2000,
        allocated_memory_bytes: 4 * GI,
        oldest_pending_name: 'render-7',
        oldest_pending_at: ago(200),
      },
      quotaRow(),
      [
        queueRow({}),
        queueRow({
          name: 'default',
          weight: 1,
          concurrency_limit: null,
          cpu_limit_millis: null,
          running: 2,
          allocated_cpu_millis: 500,
          allocated_memory_bytes: 2 * GI,
          pending: 1,
          oldest_pending_at: ago(30),
        }),
      ],
    );
    expect(describeNamespace(namespace, now)).toBe(
      [
        'Name:           team-a',
        'ResourceQuota:  team-a-quota',
        'Pending Jobs:   5 of 10 (50 %)',
        'Running Jobs:   3',
        'CPU:            2 of 8 (25 %)',
        'Memory:         4Gi of 16Gi (25 %)',
        'Placement Rate: 5/s, burst 10',
        `Oldest Pending: render-7, waiting 3m20s (since ${ago(200).toISOString()})`,
        'Queues:',
        '  NAME      WEIGHT   RUNNING   CPU       MEMORY   PENDING   OLDEST',
        '  batch     3        1/2       1500m/4   2Gi      4         3m20s',
        '  default   1        2         500m      2Gi      1         30s',
        '',
      ].join('\n'),
    );
  });

  it('a namespace without a quota or anything waiting', () => {
    const out = describeNamespace(
      presentNamespace(
        'empty',
        {
          pending: 0,
          running: 0,
          allocated_cpu_millis: 0,
          allocated_memory_bytes: 0,
          oldest_pending_name: null,
          oldest_pending_at: null,
        },
        undefined,
        [],
      ),
      now,
    );
    expect(out).toBe(
      [
        'Name:           empty',
        'ResourceQuota:  <none>',
        'Pending Jobs:   0 (no limit)',
        'Running Jobs:   0',
        'CPU:            0 (no limit)',
        'Memory:         0 (no limit)',
        'Placement Rate: <none>',
        'Oldest Pending: <none>',
        'Queues:',
        '  <none>',
        '',
      ].join('\n'),
    );
  });
});
