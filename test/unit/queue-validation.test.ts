// Queue and ResourceQuota manifests: good ones become the requests the store writes, with the
// CRDs' defaults filled in; bad ones are refused with every problem's path and line; the CRDs
// declare the defaults the code fills in.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  QUEUE_SPEC_DEFAULTS,
  defaultBurst,
  readQueueSubmission,
  readResourceQuotaSubmission,
  validateQueue,
  validateResourceQuota,
} from '../../src/api/validation/queue.js';
import { parseManifests } from '../../src/api/validation/manifest.js';
import { readCrdSchema, toApiSchema } from '../../src/api/validation/schema.js';
import { projectRoot } from '../../src/paths.js';
import { detailsOf } from '../helpers/validation.js';

function queue(spec: string, metadata = 'name: batch\n  namespace: team-a'): string {
  return `apiVersion: fencer.dev/v1
kind: Queue
metadata:
  ${metadata}
spec:
${spec}`;
}

function quota(spec: string, metadata = 'name: limits\n  namespace: team-a'): string {
  return `apiVersion: fencer.dev/v1
kind: ResourceQuota
metadata:
  ${metadata}
spec:
${spec}`;
}

const validQueue = (text: string) => validateQueue(parseManifests(text)[0]!);
const validQuota = (text: string) => validateResourceQuota(parseManifests(text)[0]!);

describe('validateQueue accepts', () => {
  it('a full queue as the request the store writes', () => {
    const text = queue(
      '  weight: 3\n  concurrencyLimit: 4\n  resourceLimit: { cpu: 1500m, memory: 8Gi }\n  lanes: strict\n',
    );
    expect(validQueue(text)).toEqual({
      namespace: 'team-a',
      name: 'batch',
      labels: {},
      spec: { weight: 3, concurrencyLimit: 4, resourceLimit: { cpu: '1500m', memory: '8Gi' }, lanes: 'strict' },
      weight: 3,
      concurrencyLimit: 4,
      cpuLimitMillis: 1500,
      memoryLimitBytes: 8 * 1024 ** 3,
      strictLanes: true,
    });
  });

  it('an empty spec, or none, with the defaults filled in (weight 1, weighted lanes, no limits)', () => {
    const expected = {
      namespace: 'default',
      name: 'q',
      labels: { team: 'a' },
      spec: { weight: 1, lanes: 'weighted' },
      weight: 1,
      concurrencyLimit: null,
      cpuLimitMillis: null,
      memoryLimitBytes: null,
      strictLanes: false,
    };
    expect(validQueue(queue('  {}\n', 'name: q\n  labels: { team: a }'))).toEqual(expected);
    expect(validQueue('apiVersion: fencer.dev/v1\nkind: Queue\nmetadata: { name: q, labels: { team: a } }\n')).toEqual(
      expected,
    );
  });

  it('a fractional weight, a zero concurrency limit (holds the queue) and numeric quantities', () => {
    const request = validQueue(queue('  weight: 0.5\n  concurrencyLimit: 0\n  resourceLimit: { cpu: 2, memory: 0 }\n'));
    expect(request).toMatchObject({ weight: 0.5, concurrencyLimit: 0, cpuLimitMillis: 2000, memoryLimitBytes: 0 });
  });

  it('JSON as well as YAML', () => {
    const request = readQueueSubmission(
      '{"apiVersion":"fencer.dev/v1","kind":"Queue","metadata":{"name":"j"},"spec":{"weight":2}}',
      'application/json',
    );
    expect(request).toMatchObject({ name: 'j', weight: 2, spec: { weight: 2, lanes: 'weighted' } });
  });
});

describe('validateQueue refuses, naming the field and its line', () => {
  const cases: Array<{ what: string; text: string; path: string; says: RegExp; line: number }> = [
    {
      what: 'a zero weight',
      text: queue('  weight: 0\n'),
      path: 'spec.weight',
      says: /must be greater than 0/,
      line: 7,
    },
    {
      what: 'a negative weight',
      text: queue('  weight: -2\n'),
      path: 'spec.weight',
      says: /must be greater than 0/,
      line: 7,
    },
    {
      what: 'a weight over 1000',
      text: queue('  weight: 1001\n'),
      path: 'spec.weight',
      says: /must be at most 1000/,
      line: 7,
    },
    {
      what: 'a weight as text',
      text: queue('  weight: heavy\n'),
      path: 'spec.weight',
      says: /must be a number, not a string/,
      line: 7,
    },
    {
      what: 'a negative concurrency limit',
      text: queue('  weight: 1\n  concurrencyLimit: -1\n'),
      path: 'spec.concurrencyLimit',
      says: /must be at least 0/,
      line: 8,
    },
    {
      what: 'a fractional concurrency limit',
      text: queue('  concurrencyLimit: 1.5\n'),
      path: 'spec.concurrencyLimit',
      says: /must be an integer, not a number/,
      line: 7,
    },
    {
      what: 'a bad CPU limit',
      text: queue('  resourceLimit:\n    cpu: lots\n'),
      path: 'spec.resourceLimit.cpu',
      says: /"lots" is not a CPU quantity/,
      line: 8,
    },
    {
      what: 'a bad memory limit',
      text: queue('  resourceLimit:\n    memory: 12Qi\n'),
      path: 'spec.resourceLimit.memory',
      says: /"12Qi" is not a memory quantity/,
      line: 8,
    },
    {
      what: 'a negative memory limit',
      text: queue('  resourceLimit:\n    memory: -1Gi\n'),
      path: 'spec.resourceLimit.memory',
      says: /must not be negative/,
      line: 8,
    },
    {
      what: 'an unknown lane mode',
      text: queue('  lanes: fifo\n'),
      path: 'spec.lanes',
      says: /"fifo" is not one of weighted, strict/,
      line: 7,
    },
    {
      what: 'an unknown field',
      text: queue('  weight: 1\n  priority: high\n'),
      path: 'spec.priority',
      says: /unknown field/,
      line: 8,
    },
    {
      what: 'a bad name',
      text: queue('  weight: 1\n', 'name: Batch_Q'),
      path: 'metadata.name',
      says: /"Batch_Q" is not a valid name/,
      line: 4,
    },
    {
      what: 'no name',
      text: queue('  weight: 1\n', 'namespace: team-a'),
      path: 'metadata.name',
      says: /Required value: a Queue is named by metadata.name/,
      line: 3,
    },
    {
      what: 'a generateName',
      text: queue('  weight: 1\n', 'name: q\n  generateName: q-'),
      path: 'metadata.generateName',
      says: /not supported for a Queue/,
      line: 5,
    },
    {
      what: 'a bad namespace',
      text: queue('  weight: 1\n', 'name: q\n  namespace: Team'),
      path: 'metadata.namespace',
      says: /"Team" is not a valid namespace/,
      line: 5,
    },
  ];

  it.each(cases)('$what', ({ text, path, says, line }) => {
    const details = detailsOf(() => validQueue(text));
    expect(details).toContainEqual({ path, message: expect.stringMatching(says), line });
  });

  it('every problem at once, each once', () => {
    const details = detailsOf(() =>
      validQueue(queue('  weight: 0\n  lanes: fifo\n  resourceLimit: { cpu: x }\n', 'generateName: q-')),
    );
    expect(details.map((d) => d.path).sort()).toEqual([
      'metadata.generateName',
      'metadata.name',
      'spec.lanes',
      'spec.resourceLimit.cpu',
      'spec.weight',
    ]);
  });

  it('another kind, or a second document', () => {
    expect(detailsOf(() => validQueue(queue('  weight: 1\n').replace('kind: Queue', 'kind: Job')))).toEqual([
      { path: 'kind', message: '"Job" is not a known kind (expected Queue)', line: 2 },
    ]);
    const two = `${queue('  weight: 1\n')}---\n${queue('  weight: 2\n')}`;
    expect(detailsOf(() => readQueueSubmission(two, undefined))[0]?.message).toMatch(
      /2 documents: submit one Queue per request/,
    );
  });
});

describe('validateResourceQuota accepts', () => {
  it('a full quota as the request the store writes', () => {
    const text = quota(
      '  hard:\n    pendingJobs: 100\n    cpu: "16"\n    memory: 64Gi\n  placementRate:\n    perSecond: 5\n    burst: 20\n',
    );
    expect(validQuota(text)).toEqual({
      namespace: 'team-a',
      name: 'limits',
      labels: {},
      spec: { hard: { pendingJobs: 100, cpu: '16', memory: '64Gi' }, placementRate: { perSecond: 5, burst: 20 } },
      pendingJobs: 100,
      cpuLimitMillis: 16_000,
      memoryLimitBytes: 64 * 1024 ** 3,
      ratePerSecond: 5,
      rateBurst: 20,
    });
  });

  it.each([
    [0.5, 1],
    [1, 1],
    [2.5, 3],
    [10, 10],
  ])(
    'a placement rate of %d a second without a burst gets burst %d (ceil, at least 1), written into the spec',
    (perSecond, burst) => {
      const request = validQuota(quota(`  placementRate: { perSecond: ${perSecond} }\n`));
      expect(request).toMatchObject({
        pendingJobs: null,
        cpuLimitMillis: null,
        memoryLimitBytes: null,
        ratePerSecond: perSecond,
        rateBurst: burst,
      });
      expect(request.spec).toEqual({ placementRate: { perSecond, burst } });
      expect(defaultBurst(perSecond)).toBe(burst);
    },
  );

  it('only a pending cap, of zero (the namespace takes no new jobs)', () => {
    expect(validQuota(quota('  hard: { pendingJobs: 0 }\n'))).toMatchObject({
      pendingJobs: 0,
      ratePerSecond: null,
      rateBurst: null,
    });
  });
});

describe('validateResourceQuota refuses, naming the field and its line', () => {
  const cases: Array<{ what: string; text: string; path: string; says: RegExp; line: number }> = [
    {
      what: 'a negative pending cap',
      text: quota('  hard:\n    pendingJobs: -1\n'),
      path: 'spec.hard.pendingJobs',
      says: /must be at least 0/,
      line: 8,
    },
    {
      what: 'a fractional pending cap',
      text: quota('  hard:\n    pendingJobs: 2.5\n'),
      path: 'spec.hard.pendingJobs',
      says: /must be an integer/,
      line: 8,
    },
    {
      what: 'a bad CPU',
      text: quota('  hard:\n    cpu: abc\n'),
      path: 'spec.hard.cpu',
      says: /"abc" is not a CPU quantity/,
      line: 8,
    },
    {
      what: 'negative memory',
      text: quota('  hard:\n    memory: -5Mi\n'),
      path: 'spec.hard.memory',
      says: /must not be negative/,
      line: 8,
    },
    {
      what: 'a zero rate',
      text: quota('  placementRate:\n    perSecond: 0\n'),
      path: 'spec.placementRate.perSecond',
      says: /must be greater than 0/,
      line: 8,
    },
    {
      what: 'no rate',
      text: quota('  placementRate:\n    burst: 3\n'),
      path: 'spec.placementRate.perSecond',
      says: /Required value/,
      line: 7,
    },
    {
      what: 'a zero burst',
      text: quota('  placementRate:\n    perSecond: 1\n    burst: 0\n'),
      path: 'spec.placementRate.burst',
      says: /must be at least 1/,
      line: 9,
    },
    {
      what: 'a quota that limits nothing',
      text: quota('  {}\n'),
      path: 'spec',
      says: /Required value: hard or placementRate/,
      line: 6,
    },
    {
      what: 'an unknown limit',
      text: quota('  hard:\n    gpus: 2\n'),
      path: 'spec.hard.gpus',
      says: /unknown field/,
      line: 8,
    },
    {
      what: 'no name',
      text: quota('  hard: { pendingJobs: 1 }\n', 'namespace: team-a'),
      path: 'metadata.name',
      says: /Required value: a ResourceQuota is named/,
      line: 3,
    },
  ];

  it.each(cases)('$what', ({ text, path, says, line }) => {
    const details = detailsOf(() => validQuota(text));
    expect(details).toContainEqual({ path, message: expect.stringMatching(says), line });
  });

  it('no spec at all', () => {
    const details = detailsOf(() =>
      readResourceQuotaSubmission('apiVersion: fencer.dev/v1\nkind: ResourceQuota\nmetadata: { name: q }\n', undefined),
    );
    expect(details).toEqual([{ path: 'spec', message: 'Required value', line: 1 }]);
  });
});

interface Schema {
  [keyword: string]: unknown;
  properties?: Record<string, Schema>;
  default?: unknown;
}

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; shortNames?: string[]; categories?: string[] };
    versions: Array<{
      name: string;
      subresources?: { status?: object };
      additionalPrinterColumns?: Array<{ name: string; jsonPath: string }>;
    }>;
  };
}

const readCrd = (file: string) => parse(readFileSync(join(projectRoot(), file), 'utf8')) as Crd;

/** Every node of a schema with where it is. */
function visit(schema: Schema, where: string, fn: (node: Schema, where: string) => void): void {
  fn(schema, where);
  for (const [key, child] of Object.entries(schema.properties ?? {})) visit(child, `${where}.${key}`, fn);
  if (schema.items && typeof schema.items === 'object') visit(schema.items as Schema, `${where}[]`, fn);
}

describe.each([
  {
    file: 'crds/queue.yaml',
    name: 'queues.fencer.dev',
    kind: 'Queue',
    plural: 'queues',
    columns: ['Weight', 'Limit', 'Running', 'Pending', 'Age'],
  },
  {
    file: 'crds/resourcequota.yaml',
    name: 'resourcequotas.fencer.dev',
    kind: 'ResourceQuota',
    plural: 'resourcequotas',
    columns: ['Pending', 'Max-Pending', 'Rate', 'Age'],
  },
])('the $kind CRD', ({ file, name, kind, plural, columns }) => {
  const crd = readCrd(file);
  const schema = readCrdSchema(file) as Schema;

  it('is a namespaced v1 CRD of fencer.dev with a status subresource and printer columns', () => {
    expect(crd).toMatchObject({
      metadata: { name },
      spec: { group: 'fencer.dev', scope: 'Namespaced', names: { kind, plural, categories: ['fencer'] } },
    });
    const [v1] = crd.spec.versions;
    expect(v1?.subresources?.status).toEqual({});
    expect(v1?.additionalPrinterColumns?.map((c) => c.name)).toEqual(columns);
  });

  it('is structural: every field has a type, no properties next to additionalProperties, nothing in metadata', () => {
    const problems: string[] = [];
    visit(schema, '', (node, where) => {
      if (node.properties !== undefined && node.additionalProperties !== undefined)
        problems.push(`${where}: properties and additionalProperties`);
      if (node.type === undefined && node['x-kubernetes-int-or-string'] !== true) problems.push(`${where}: no type`);
    });
    expect(problems).toEqual([]);
    expect(schema.properties?.metadata?.properties).toBeUndefined();
  });

  it('writes exclusive bounds as OpenAPI 3.0 does, and the API schema as JSON Schema does', () => {
    const api = toApiSchema(schema) as Schema;
    const bounds: string[] = [];
    visit(api, '', (node, where) => {
      if (node.exclusiveMinimum !== undefined)
        bounds.push(`${where} > ${String(node.exclusiveMinimum)} (minimum ${String(node.minimum)})`);
    });
    expect(bounds).toEqual(
      kind === 'Queue'
        ? ['.spec.weight > 0 (minimum undefined)']
        : ['.spec.placementRate.perSecond > 0 (minimum undefined)'],
    );
  });
});

describe('the CRDs declare the defaults the code fills in', () => {
  it('Queue: spec {} with weight 1 and lanes weighted', () => {
    const spec = (readCrdSchema('crds/queue.yaml') as Schema).properties!.spec!;
    expect(spec.default).toEqual({});
    const declared = Object.fromEntries(
      Object.entries(spec.properties ?? {}).flatMap(([field, s]) =>
        s.default === undefined ? [] : [[field, s.default]],
      ),
    );
    expect(declared).toEqual(QUEUE_SPEC_DEFAULTS);
    expect(validQueue('apiVersion: fencer.dev/v1\nkind: Queue\nmetadata: { name: q }\n').spec).toEqual(declared);
  });

  it('ResourceQuota: no default a schema can say (burst follows perSecond)', () => {
    const defaults: string[] = [];
    visit(readCrdSchema('crds/resourcequota.yaml') as Schema, '', (node, where) => {
      if (node.default !== undefined) defaults.push(where);
    });
    expect(defaults).toEqual([]);
  });
});
