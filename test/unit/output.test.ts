import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { Job, JobEvent, NodeResource } from '../../src/domain/resources.js';
import { describeJob, parseOutputFormat, renderJobs, renderNodes, renderTopNodes } from '../../src/cli/output.js';
import { humanDuration } from '../../src/domain/duration.js';
import { renderTable } from '../../src/report/table.js';

const now = new Date('2025-03-01T12:00:00Z');
const ago = (seconds: number): string => new Date(now.getTime() - seconds * 1000).toISOString();

const running: Job = {
  apiVersion: 'fencer.dev/v1',
  kind: 'Job',
  metadata: { name: 'etl-nightly', namespace: 'data', labels: { team: 'data' }, creationTimestamp: ago(5) },
  spec: { resources: { cpu: '500m', memory: '256Mi' }, duration: '30s', maxAttempts: 3 },
  status: {
    phase: 'Running',
    node: 'node-2',
    attempt: 1,
    assignment: 'a-7f3c',
    epoch: 4,
    startTime: ago(3),
    conditions: [],
  },
};

const unschedulable: Job = {
  apiVersion: 'fencer.dev/v1',
  kind: 'Job',
  metadata: { name: 'big', namespace: 'default', creationTimestamp: ago(3 * 3600) },
  spec: { resources: { cpu: '64', memory: '1Ti' }, duration: '5m', nodeSelector: { pool: 'gpu' } },
  status: {
    phase: 'Pending',
    attempt: 0,
    conditions: [
      {
        type: 'Scheduled',
        status: 'False',
        reason: 'Waiting',
        message: 'queued',
        lastTransitionTime: ago(3 * 3600),
      },
      {
        type: 'Scheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: 'no node has 64 CPU free',
        lastTransitionTime: ago(60),
      },
    ],
  },
};

const node: NodeResource = {
  apiVersion: 'fencer.dev/v1',
  kind: 'Node',
  metadata: { name: 'node-1', labels: { pool: 'cpu', zone: 'a' } },
  spec: { capacity: { cpu: '4', memory: '8Gi', jobs: 110 } },
  status: {
    phase: 'Ready',
    allocated: { cpu: '1500m', memory: '512Mi', jobs: 3, unclaimed: 0 },
    lastHeartbeatTime: ago(2),
    connected: true,
    conditions: [],
  },
};

describe('renderTable', () => {
  it('pads every column but the last to its widest cell plus 3 spaces', () => {
    expect(
      renderTable(
        ['NAME', 'PHASE'],
        [
          ['a', 'Running'],
          ['longer-name', 'Pending'],
        ],
      ),
    ).toBe('NAME          PHASE\n' + 'a             Running\n' + 'longer-name   Pending\n');
  });
});

describe('humanDuration', () => {
  it.each([
    [0, '0s'],
    [-1500, '0s'],
    [-5000, '<invalid>'],
    [5_000, '5s'],
    [119_000, '119s'],
    [180_000, '3m'],
    [190_000, '3m10s'],
    [45 * 60_000, '45m'],
    [2 * 3600_000, '120m'],
    [5 * 3600_000 + 30 * 60_000, '5h30m'],
    [20 * 3600_000, '20h'],
    [4 * 86400_000, '4d'],
    [4 * 86400_000 + 3 * 3600_000, '4d3h'],
    [30 * 86400_000, '30d'],
    [3 * 365 * 86400_000, '3y'],
  ])('%i ms is %s', (ms, expected) => {
    expect(humanDuration(ms)).toBe(expected);
  });
});

describe('renderJobs', () => {
  it('prints the default table', () => {
    expect(renderJobs([running, unschedulable], { format: 'table', now })).toBe(
      [
        'NAME          PHASE     NODE     ATTEMPT   AGE',
        'etl-nightly   Running   node-2   1         5s',
        'big           Pending   <none>   0         3h',
        '',
      ].join('\n'),
    );
  });

  it('adds the wide columns, the latest condition as REASON, and NAMESPACE for -A', () => {
    const out = renderJobs([running, unschedulable], { format: 'wide', now, allNamespaces: true });
    const [header, first, second] = out.split('\n');
    expect(header?.split(/\s+/)).toEqual([
      'NAMESPACE',
      'NAME',
      'PHASE',
      'NODE',
      'ATTEMPT',
      'AGE',
      'CPU',
      'MEMORY',
      'DURATION',
      'EPOCH',
      'ASSIGNMENT',
      'REASON',
    ]);
    expect(first?.split(/\s+/)).toEqual([
      'data',
      'etl-nightly',
      'Running',
      'node-2',
      '1',
      '5s',
      '500m',
      '256Mi',
      '30s',
      '4',
      'a-7f3c',
      '<none>',
    ]);
    expect(second?.split(/\s+/)).toEqual([
      'default',
      'big',
      'Pending',
      '<none>',
      '0',
      '3h',
      '64',
      '1Ti',
      '5m',
      '<none>',
      '<none>',
      'Unschedulable',
    ]);
    // Columns line up: each header starts where its cells start.
    expect(first?.indexOf('Running')).toBe(header?.indexOf('PHASE'));
    expect(second?.indexOf('Unschedulable')).toBe(header?.indexOf('REASON'));
  });

  it('prints a JobList in json, with the documented key order', () => {
    const out = renderJobs([running], { format: 'json', now });
    expect(out).toBe(
      JSON.stringify({ apiVersion: 'fencer.dev/v1', kind: 'JobList', items: [running] }, null, 2) + '\n',
    );
    expect(out.startsWith('{\n  "apiVersion": "fencer.dev/v1",\n  "kind": "JobList",\n  "items": [')).toBe(true);
  });

  it('prints a JobList in yaml', () => {
    const out = renderJobs([running, unschedulable], { format: 'yaml', now });
    expect(out.startsWith('apiVersion: fencer.dev/v1\nkind: JobList\nitems:\n')).toBe(true);
    expect(YAML.parse(out)).toEqual({ apiVersion: 'fencer.dev/v1', kind: 'JobList', items: [running, unschedulable] });
  });

  it('prints a single named object itself, not a list', () => {
    expect(JSON.parse(renderJobs([running], { format: 'json', now, single: true }))).toEqual(running);
    expect(YAML.parse(renderJobs([running], { format: 'yaml', now, single: true }))).toEqual(running);
  });

  it('prints an empty list as a document, not as nothing', () => {
    expect(JSON.parse(renderJobs([], { format: 'json', now }))).toEqual({
      apiVersion: 'fencer.dev/v1',
      kind: 'JobList',
      items: [],
    });
  });

  it('prints resource/name with -o name', () => {
    expect(renderJobs([running, unschedulable], { format: 'name', now })).toBe(
      'job.fencer.dev/etl-nightly\njob.fencer.dev/big\n',
    );
  });
});

describe('renderNodes', () => {
  it.each([
    [
      'table' as const,
      ['NAME     STATUS   CPU         MEMORY          AGE', 'node-1   Ready    1500m/4     512Mi/8Gi       2s'],
    ],
    [
      'wide' as const,
      [
        'NAME     STATUS   CPU         MEMORY          AGE   LABELS           CONNECTED',
        'node-1   Ready    1500m/4     512Mi/8Gi       2s    pool=cpu,zone=a   true',
      ],
    ],
  ])('prints the %s node table', (format, expected) => {
    const lines = renderNodes([node], { format, now }).trimEnd().split('\n');
    // Compare cell by cell, then check that cells start under their headers.
    expect(lines.map((l) => l.split(/\s+/))).toEqual(expected.map((l) => l.split(/\s+/)));
    const [header, row] = lines;
    for (const [col, title] of (header ?? '').split(/\s+/).entries()) {
      const cell = (row ?? '').split(/\s+/)[col] ?? '';
      expect(row?.indexOf(cell, header?.indexOf(title))).toBe(header?.indexOf(title));
    }
  });

  it('prints a NodeList in json', () => {
    const out = JSON.parse(renderNodes([node], { format: 'json', now }));
    expect(out).toEqual({ apiVersion: 'fencer.dev/v1', kind: 'NodeList', items: [node] });
  });
});

describe('describeJob', () => {
  it('shows the facts one per line, aligned', () => {
    const out = describeJob(running, now);
    expect(out).toContain('Name:            etl-nightly\n');
    expect(out).toContain('Namespace:       data\n');
    expect(out).toContain('Labels:          team=data\n');
    expect(out).toContain('Phase:           Running\n');
    expect(out).toContain('Node:            node-2\n');
    expect(out).toContain('Attempt:         1 of 3\n');
    expect(out).toContain('Assignment:      a-7f3c\n');
    expect(out).toContain('Epoch:           4\n');
    expect(out).toContain('Resources:       cpu=500m, memory=256Mi\n');
    expect(out).toContain('Duration:        30s\n');
    expect(out).toContain(`Start Time:      ${ago(3)} (3s ago)\n`);
    expect(out).toContain('Completion Time: <none>\n');
    expect(out).toContain('Conditions:  <none>\n');
  });

  it('continues multi-line values under the value column', () => {
    const labelled = { ...running, metadata: { ...running.metadata, labels: { team: 'data', tier: 'batch' } } };
    expect(describeJob(labelled, now)).toContain('Labels:          team=data\n                 tier=batch\n');
  });

  it('ends with the conditions table, reasons and messages included', () => {
    const out = describeJob(unschedulable, now);
    expect(out).toContain('Node-Selector:   pool=gpu\n');
    expect(out).toContain('Attempt:         0\n');
    const conditions = out.slice(out.indexOf('Conditions:'));
    expect(conditions).toBe(
      [
        'Conditions:',
        '  Type        Status   Reason          Message',
        '  ----        ------   ------          -------',
        '  Scheduled   False    Waiting         queued',
        '  Scheduled   False    Unschedulable   no node has 64 CPU free',
        'Events:  <none>',
        '',
      ].join('\n'),
    );
  });

  it('ends with the events from the history, oldest first, warnings marked, as kubectl describe does', () => {
    const event = (
      secondsAgo: number,
      type: JobEvent['type'],
      reason: string,
      replica: string | null,
      message: string,
    ): JobEvent => ({
      time: ago(secondsAgo),
      type,
      reason,
      object: 'job',
      message,
      epoch: null,
      node: null,
      replica,
      actor: null,
    });
    const out = describeJob(running, now, [
      event(5, 'Normal', 'Pending', 'replica-1', 'job Pending'),
      event(4, 'Normal', 'Assigned', 'replica-0', 'job Pending → Assigned (node node-2, epoch 4)'),
      event(4, 'Warning', 'NodeDied', 'replica-0', 'assignment/a-1 Running → Lost (node node-1, epoch 4)'),
      event(3, 'Normal', 'Running', null, 'job Assigned → Running (node node-2, epoch 4)'),
    ]);
    expect(out.slice(out.indexOf('Events:'))).toBe(
      [
        'Events:',
        '  Type      Reason     Age   From        Message',
        '  ----      ------     ---   ----        -------',
        '  Normal    Pending    5s    replica-1   job Pending',
        '  Normal    Assigned   4s    replica-0   job Pending → Assigned (node node-2, epoch 4)',
        '  Warning   NodeDied   4s    replica-0   assignment/a-1 Running → Lost (node node-1, epoch 4)',
        '  Normal    Running    3s    <none>      job Assigned → Running (node node-2, epoch 4)',
        '',
      ].join('\n'),
    );
  });
});

describe('renderTopNodes', () => {
  it('shows what each node holds against its capacity, with percentages', () => {
    const idle = {
      ...node,
      metadata: { name: 'node-2' },
      status: { ...node.status, phase: 'Dead' as const, allocated: { cpu: '0', memory: '0', jobs: 0, unclaimed: 0 } },
    };
    expect(renderTopNodes([node, idle])).toBe(
      [
        'NAME     CPU(cores)   CPU%   MEMORY(bytes)   MEMORY%   STATUS',
        'node-1   1500m/4      38%    512Mi/8Gi       6%        Ready',
        'node-2   0/4          0%     0/8Gi           0%        Dead',
        '',
      ].join('\n'),
    );
  });
});

describe('parseOutputFormat', () => {
  it('defaults to the table and rejects unknown formats', () => {
    expect(parseOutputFormat(undefined)).toBe('table');
    expect(parseOutputFormat('wide')).toBe('wide');
    expect(() => parseOutputFormat('xml')).toThrow(/unknown output format "xml"/);
  });
});
