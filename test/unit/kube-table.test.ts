// Tables for kubectl get: the columns a CRD declares after Name, cells rendered as
// kube-apiserver renders a custom resource's (a date as an age, a missing field as null, which
// kubectl 1.32 prints as a blank cell), and the object or its metadata in each row.
import { describe, expect, it } from 'vitest';
import { fencerKinds } from '../../src/api/kube/kinds.js';
import {
  columnDefinitions,
  evaluateJsonPath,
  parseIncludeObject,
  parseJsonPath,
  toTable,
  type KubeObject,
} from '../../src/api/kube/table.js';

const kinds = fencerKinds();
const kind = (name: string) => kinds.find((k) => k.kind === name) as (typeof kinds)[number];
const NOW = new Date('2026-03-01T12:00:00Z');

const job: KubeObject = {
  apiVersion: 'fencer.dev/v1',
  kind: 'Job',
  metadata: {
    name: 'train',
    namespace: 'team-a',
    labels: { app: 'ml' },
    uid: 'u-1',
    resourceVersion: '42',
    creationTimestamp: '2026-03-01T11:55:00Z',
  },
  spec: { resources: { cpu: '500m', memory: '1Gi' }, duration: '5m' },
  status: { phase: 'Running', node: 'node-1', attempt: 1, conditions: [] },
};

const pending: KubeObject = {
  ...job,
  metadata: { ...job.metadata, name: 'wait', creationTimestamp: '2026-02-27T12:00:00Z' },
  status: { phase: 'Pending', attempt: 0, conditions: [] },
};

const cronJob: KubeObject = {
  apiVersion: 'fencer.dev/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'team-a', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { schedule: '0 3 * * *', timeZone: 'Europe/Paris', suspend: false, jobTemplate: { spec: {} } },
  status: { activeCount: 1, lastScheduleTime: '2026-03-01T02:00:00Z', nextScheduleTime: '2026-03-02T02:00:00Z' },
};

describe('columnDefinitions', () => {
  it.each([
    {
      kind: 'Job',
      columns: [
        ['Name', 'string', 'name'],
        ['Phase', 'string', ''],
        ['Node', 'string', ''],
        ['Age', 'date', ''],
      ],
    },
    {
      kind: 'Workflow',
      columns: [
        ['Name', 'string', 'name'],
        ['Phase', 'string', ''],
        ['Age', 'date', ''],
      ],
    },
    {
      kind: 'CronJob',
      columns: [
        ['Name', 'string', 'name'],
        ['Schedule', 'string', ''],
        ['Timezone', 'string', ''],
        ['Suspend', 'boolean', ''],
        ['Active', 'integer', ''],
        ['Last Schedule', 'date', ''],
        ['Next', 'date', ''],
        ['Age', 'date', ''],
      ],
    },
  ])("$kind: Name first, then the CRD's columns", ({ kind: name, columns }) => {
    expect(columnDefinitions(kind(name)).map((c) => [c.name, c.type, c.format])).toEqual(columns);
  });

  it('describes a column by its JSONPath when the CRD does not, and keeps priorities', () => {
    const [, phase] = columnDefinitions(kind('Job'));
    expect(phase).toEqual({
      name: 'Phase',
      type: 'string',
      format: '',
      description: 'Custom resource definition column (in JSONPath format): .status.phase',
      priority: 0,
    });
    expect(columnDefinitions(kind('Node')).find((c) => c.name === 'Connected')).toMatchObject({
      priority: 1,
      description: 'Whether its agent holds a watch stream open now.',
    });
  });
});

describe('toTable', () => {
  it('renders Jobs: name, phase, node, age; a missing node is null', () => {
    const table = toTable(kind('Job'), [job, pending], { now: NOW, listMeta: { resourceVersion: '50' } });
    expect(table).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '50' } });
    expect(table.rows.map((r) => r.cells)).toEqual([
      ['train', 'Running', 'node-1', '5m'],
      ['wait', 'Pending', null, '2d'],
    ]);
  });

  it('renders CronJobs: booleans and integers as such, dates as ages, a future date <invalid> as the apiserver does', () => {
    const table = toTable(kind('CronJob'), [cronJob], { now: NOW });
    expect(table.rows[0]?.cells).toEqual(['nightly', '0 3 * * *', 'Europe/Paris', false, 1, '10h', '<invalid>', '59d']);
  });

  it("puts each object's metadata in its row by default, the object with Object, nothing with None", () => {
    expect(toTable(kind('Job'), [job], { now: NOW }).rows[0]?.object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: job.metadata,
    });
    expect(toTable(kind('Job'), [job], { now: NOW, includeObject: 'Object' }).rows[0]?.object).toBe(job);
    expect(toTable(kind('Job'), [job], { now: NOW, includeObject: 'None' }).rows[0]).toEqual({
      cells: ['train', 'Running', 'node-1', '5m'],
    });
  });

  it('answers in the Table version asked for', () => {
    const table = toTable(kind('Job'), [job], { now: NOW, version: 'v1beta1' });
    expect(table.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect(table.rows[0]?.object).toMatchObject({ apiVersion: 'meta.k8s.io/v1beta1' });
  });

  it.each([
    { what: 'a missing field', type: 'string', value: undefined, cell: null },
    { what: 'null', type: 'string', value: null, cell: null },
    { what: 'a number in a string column', type: 'string', value: 2, cell: '2' },
    { what: 'an object in a string column, as compact JSON', type: 'string', value: { cpu: '2' }, cell: '{"cpu":"2"}' },
    { what: 'a fraction in an integer column, truncated', type: 'integer', value: 2.7, cell: 2 },
    { what: 'a string in an integer column', type: 'integer', value: '2', cell: null },
    { what: 'a number', type: 'number', value: 0.5, cell: 0.5 },
    { what: 'a string in a boolean column', type: 'boolean', value: 'true', cell: null },
    { what: 'a date that is not one', type: 'date', value: 'yesterday', cell: '<invalid>' },
    { what: "Go's zero time", type: 'date', value: '0001-01-01T00:00:00Z', cell: '<unknown>' },
    { what: 'a date with an offset, 90 s ago', type: 'date', value: '2026-03-01T12:58:30+01:00', cell: '90s' },
    { what: 'a date one second ahead (clock skew)', type: 'date', value: '2026-03-01T12:00:01Z', cell: '0s' },
  ] as const)('renders $what in a $type column as $cell', ({ type, value, cell }) => {
    const probe = { ...kind('Job'), printerColumns: [{ name: 'X', type, jsonPath: '.spec.x' }] };
    const object = { metadata: { name: 'p' }, spec: value === undefined ? {} : { x: value } };
    expect(toTable(probe, [object], { now: NOW }).rows[0]?.cells).toEqual(['p', cell]);
  });
});

describe('evaluateJsonPath', () => {
  const object = {
    metadata: { labels: { 'fencer.dev/workflow': 'etl' } },
    status: { conditions: [{ type: 'Ready' }, { type: 'Complete' }] },
    spec: { n: 0 },
  };

  it.each([
    { path: '.spec.n', value: 0 },
    { path: '{.spec.n}', value: 0 },
    { path: ".metadata.labels['fencer.dev/workflow']", value: 'etl' },
    { path: '.metadata.labels.fencer\\.dev/workflow', value: 'etl' },
    { path: '.status.conditions[1].type', value: 'Complete' },
    { path: '.status.conditions[-1].type', value: 'Complete' },
    { path: '.status.conditions[5].type', value: undefined },
    { path: '.status.phase', value: undefined },
    { path: '.spec.n.deeper', value: undefined },
    { path: '.status.conditions.type', value: undefined },
    { path: '.spec.toString', value: undefined },
  ])('$path → $value', ({ path, value }) => {
    expect(evaluateJsonPath(object, path)).toBe(value);
  });

  it.each(['spec.n', '.spec[*]', '.spec..n', '.a[?(@.x)]'])('%s is not a simple path', (path) => {
    expect(parseJsonPath(path)).toBeNull();
  });
});

describe('parseIncludeObject', () => {
  it.each([
    { value: undefined, expected: 'Metadata' },
    { value: 'None', expected: 'None' },
    { value: 'Object', expected: 'Object' },
    { value: 'object', expected: null },
  ])('$value → $expected', ({ value, expected }) => {
    expect(parseIncludeObject(value)).toBe(expected);
  });
});
