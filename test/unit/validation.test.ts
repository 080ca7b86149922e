import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect } from 'vitest';
import { parse } from 'yaml';
import { validateJob } from '../../src/api/validation/job.js';
import { parseManifests } from '../../src/api/validation/manifest.js';
import { readCrdSchema, toApiSchema } from '../../src/api/validation/schema.js';
import { ValidationError, type ValidationDetail } from '../../src/errors/validation-error.js';
import { isDns1123Label } from '../../src/domain/names.js';
import { projectRoot } from '../../src/paths.js';
import type { JobRequest } from '../../src/domain/resources.js';

const GOOD = `apiVersion: fencer.dev/v1
kind: Job
metadata:
  name: render-frames
  namespace: films
  labels:
    app.kubernetes.io/name: render
spec:
  resources:
    cpu: 500m
    memory: 256Mi
  duration: 1m30s
  nodeSelector:
    pool: gpu
`;

/** A good manifest with `spec` lines replaced: the spec starts at line 8. */
function withSpec(spec: string): string {
  return `apiVersion: fencer.dev/v1
kind: Job
metadata:
  name: job-1
spec:
${spec}`;
}

/** The details of the ValidationError that `submit` throws. */
function detailsOf(submit: () => unknown): ValidationDetail[] {
  try {
    submit();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details;
  }
  throw new Error('expected a ValidationError, got none');
}

function validateText(text: string, contentType?: string): JobRequest[] {
  return parseManifests(text, contentType).map(validateJob);
}

describe('validateJob accepts', () => {
  it('a good manifest as the JobRequest the scheduler needs', () => {
    expect(validateText(GOOD)).toEqual([
      {
        namespace: 'films',
        name: 'render-frames',
        labels: { 'app.kubernetes.io/name': 'render' },
        spec: {
          resources: { cpu: '500m', memory: '256Mi' },
          duration: '1m30s',
          nodeSelector: { pool: 'gpu' },
          maxAttempts: 3,
        },
        cpuMillis: 500,
        memoryBytes: 268_435_456,
        durationMs: 90_000,
        nodeSelector: { pool: 'gpu' },
        maxAttempts: 3,
      },
    ]);
  });

  it('defaults: namespace "default", no labels, no selector; numbers as quantities', () => {
    const [job] = validateText(withSpec('  resources: {cpu: 2, memory: 1073741824}\n  duration: 5m\n  maxAttempts: 1\n'));
    expect(job).toMatchObject({
      namespace: 'default',
      labels: {},
      nodeSelector: {},
      cpuMillis: 2000,
      memoryBytes: 1_073_741_824,
      durationMs: 300_000,
      maxAttempts: 1,
      spec: { resources: { cpu: 2, memory: 1_073_741_824 }, duration: '5m', maxAttempts: 1 },
    });
  });

  it('a status sent back with the manifest (it is ignored)', () => {
    const [job] = validateText(`${GOOD}status:\n  phase: Running\n  whatever: 1\n`);
    expect(job?.name).toBe('render-frames');
    expect(job).not.toHaveProperty('status');
  });

  it('several YAML documents, skipping empty ones', () => {
    const second = GOOD.replace('render-frames', 'render-audio');
    const jobs = validateText(`---\n${GOOD}---\n# nothing here\n---\n${second}---\n`);
    expect(jobs.map((j) => j.name)).toEqual(['render-frames', 'render-audio']);
  });

  it('JSON, by content type or by its first character, one object or an array of them', () => {
    const object = parse(GOOD) as unknown;
    const text = JSON.stringify(object, null, 2);
    expect(validateText(text)).toEqual(validateText(GOOD));
    expect(validateText(` ${text}`, 'application/json; charset=utf-8')).toEqual(validateText(GOOD));
    expect(validateText(JSON.stringify([object, object])).length).toBe(2);
  });
});

describe('validateJob refuses', () => {
  const cases: Array<{ name: string; text: string; details: ValidationDetail[] }> = [
    {
      name: 'an unknown kind (and reports nothing else about it)',
      text: 'apiVersion: fencer.dev/v1\nkind: Foo\nspec: {}\n',
      details: [{ path: 'kind', message: '"Foo" is not a known kind (expected Job)', line: 2 }],
    },
    {
      name: 'another apiVersion and a missing kind',
      text: 'apiVersion: batch/v1\nmetadata: {name: x}\n',
      details: [
        { path: 'apiVersion', message: '"batch/v1" is not supported (expected fencer.dev/v1)', line: 1 },
        { path: 'kind', message: 'Required value (expected Job)', line: 1 },
      ],
    },
    {
      name: 'an unknown field in spec',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 30s\n  foo: bar\n'),
      details: [{ path: 'spec.foo', message: 'unknown field', line: 8 }],
    },
    {
      name: 'an unknown field at the top level and in metadata',
      text: `${GOOD}extra: true\n`.replace('  namespace: films\n', '  namespace: films\n  nmespace: typo\n'),
      details: [
        { path: 'extra', message: 'unknown field', line: 16 },
        { path: 'metadata.nmespace', message: 'unknown field', line: 6 },
      ],
    },
    {
      name: 'quantities that are not quantities',
      text: withSpec('  resources:\n    cpu: abc\n    memory: 12Qi\n  duration: 30s\n'),
      details: [
        { path: 'spec.resources.cpu', message: '"abc" is not a CPU quantity', line: 7 },
        { path: 'spec.resources.memory', message: '"12Qi" is not a memory quantity', line: 8 },
      ],
    },
    {
      name: 'zero and negative resources',
      text: withSpec('  resources:\n    cpu: 0\n    memory: -1Gi\n  duration: 30s\n'),
      details: [
        { path: 'spec.resources.cpu', message: 'must be greater than zero', line: 7 },
        { path: 'spec.resources.memory', message: 'must be greater than zero', line: 8 },
      ],
    },
    {
      name: 'a quantity of the wrong type',
      text: withSpec('  resources:\n    cpu: [1]\n    memory: 1Gi\n  duration: 30s\n'),
      details: [{ path: 'spec.resources.cpu', message: 'must be a number or a string, not an array', line: 7 }],
    },
    {
      name: 'a duration that is not one, and a zero duration',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: forever\n---\n') + withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 0s\n'),
      details: [{ path: 'spec.duration', message: '"forever" is not a duration (use 30s, 5m, 1h)', line: 7 }],
    },
    {
      name: 'missing required fields, pointing at the parent',
      text: withSpec('  resources: {cpu: 1}\n'),
      details: [
        { path: 'spec.duration', message: 'Required value', line: 5 },
        { path: 'spec.resources.memory', message: 'Required value', line: 6 },
      ],
    },
    {
      name: 'a missing spec and name',
      text: 'apiVersion: fencer.dev/v1\nkind: Job\nmetadata: {}\n',
      details: [
        { path: 'spec', message: 'Required value', line: 1 },
        { path: 'metadata.name', message: 'Required value', line: 3 },
      ],
    },
    {
      name: 'maxAttempts below one, a non-string selector and label',
      text: `${GOOD}  maxAttempts: 0\n`.replace('pool: gpu', 'pool: 7').replace('name: render\n', 'name: render\n    tier: true\n'),
      details: [
        { path: 'metadata.labels.tier', message: 'must be a string, not a boolean', line: 8 },
        { path: 'spec.nodeSelector.pool', message: 'must be a string, not an integer', line: 15 },
        { path: 'spec.maxAttempts', message: 'must be at least 1', line: 16 },
      ],
    },
    {
      name: 'a bad name and namespace',
      text: GOOD.replace('name: render-frames', 'name: Render_Frames').replace('namespace: films', `namespace: ${'a'.repeat(64)}`),
      details: [
        {
          path: 'metadata.name',
          message:
            '"Render_Frames" is not a valid name: a lowercase RFC 1123 label must consist of lower case alphanumeric ' +
            "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', " +
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
          line: 4,
        },
        { path: 'metadata.namespace', message: `"${'a'.repeat(64)}" is not a valid namespace: must be no more than 63 characters`, line: 5 },
      ],
    },
    {
      name: 'a label key that is not one',
      text: GOOD.replace('app.kubernetes.io/name: render', '"bad key": render'),
      details: [
        {
          path: 'metadata.labels[bad key]',
          message:
            "\"bad key\" is not a valid label key: name part must consist of alphanumeric characters, '-', '_' or '.', " +
            "and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')",
          line: 7,
        },
      ],
    },
    {
      name: 'a document that is not an object',
      text: '- just\n- a list\n',
      details: [{ path: '', message: 'a manifest must be an object, not an array', line: 1 }],
    },
  ];
  it.each(cases)('$name', ({ text, details }) => {
    expect(detailsOf(() => validateText(text))).toEqual(details);
  });

  it('puts every detail in the message, with its line', () => {
    expect(() => validateText(withSpec('  resources: {cpu: x, memory: 1Gi}\n  duration: 1s\n'))).toThrow(
      'spec.resources.cpu: "x" is not a CPU quantity (line 6)',
    );
  });

  it('a JSON problem with the line it is on', () => {
    const json = JSON.stringify(parse(GOOD), null, 2).replace('"500m"', '"lots"');
    const line = json.split('\n').findIndex((l) => l.includes('"lots"')) + 1;
    expect(detailsOf(() => validateText(json))).toEqual([
      { path: 'spec.resources.cpu', message: '"lots" is not a CPU quantity', line },
    ]);
  });
});

describe('parseManifests refuses', () => {
  const cases: Array<{ name: string; text: string; contentType?: string; line: number | undefined; message: RegExp }> = [
    { name: 'YAML with a bad indent', text: 'apiVersion: fencer.dev/v1\nkind: Job\nspec:\n  duration: 1s\n resources: {}\n', line: 5, message: /^invalid YAML: / },
    { name: 'YAML with an unclosed flow sequence', text: 'kind: Job\nspec:\n  nodeSelector: [a, b\nmetadata: {}\n', line: 4, message: /^invalid YAML: / },
    { name: 'YAML with a key written twice', text: 'kind: Job\nspec: {}\nkind: Job\n', line: 3, message: /^invalid YAML: Map keys must be unique/ },
    { name: 'a bad second document', text: `${GOOD}---\nkind: Job\nspec: [a\n`, line: 18, message: /^invalid YAML: / },
    { name: 'JSON with a stray comma', text: '{\n  "kind": "Job",\n  "spec": [1,,2]\n}', line: 3, message: /^invalid JSON: Unexpected token ','$/ },
    { name: 'JSON with a trailing comma', text: '{\n  "kind": "Job",\n}', line: 3, message: /^invalid JSON: / },
    { name: 'JSON cut short', text: '{\n  "kind": "Job",\n  "spec": [1,', line: 3, message: /^invalid JSON: Unexpected end of JSON input$/ },
    { name: 'JSON by content type that is YAML', text: 'kind: Job\n', contentType: 'application/json', line: 1, message: /^invalid JSON: / },
    { name: 'JSON with a key written twice', text: '{\n"kind": "Job",\n"kind": "Job"\n}', line: 3, message: /^invalid JSON: Map keys must be unique/ },
    { name: 'empty input', text: '', line: undefined, message: /^no manifest in the input/ },
    { name: 'only comments and separators', text: '# nothing\n---\n---\n', line: undefined, message: /^no manifest in the input/ },
  ];
  it.each(cases)('$name', ({ text, contentType, line, message }) => {
    const [detail, ...more] = detailsOf(() => parseManifests(text, contentType));
    expect(more).toEqual([]);
    expect(detail?.path).toBe('');
    expect(detail?.line).toBe(line);
    expect(detail?.message).toMatch(message);
  });
});

describe('the Job CRD', () => {
  const crd = parse(readFileSync(join(projectRoot(), 'crds/job.yaml'), 'utf8')) as {
    apiVersion: string;
    kind: string;
    metadata: { name: string };
    spec: {
      group: string;
      scope: string;
      names: { kind: string; plural: string };
      versions: Array<{ name: string; subresources?: { status?: object }; additionalPrinterColumns?: Array<{ name: string; jsonPath: string }> }>;
    };
  };
  const schema = readCrdSchema('crds/job.yaml');

  it('is a namespaced v1 CRD for jobs.fencer.dev with a status subresource and printer columns', () => {
    expect(crd).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'jobs.fencer.dev' },
      spec: { group: 'fencer.dev', scope: 'Namespaced', names: { kind: 'Job', plural: 'jobs' } },
    });
    const [v1] = crd.spec.versions;
    expect(v1?.name).toBe('v1');
    expect(v1?.subresources?.status).toEqual({});
    expect(v1?.additionalPrinterColumns?.map((c) => c.jsonPath)).toEqual(['.status.phase', '.status.node', '.metadata.creationTimestamp']);
  });

  it('is structural: every field has a type, no properties next to additionalProperties', () => {
    const problems: string[] = [];
    visit(schema, '', (node, where) => {
      if (node.properties !== undefined && node.additionalProperties !== undefined) problems.push(`${where}: properties and additionalProperties`);
      if (node.type === undefined && node['x-kubernetes-int-or-string'] !== true && node['x-kubernetes-preserve-unknown-fields'] !== true) {
        problems.push(`${where}: no type`);
      }
    });
    expect(problems).toEqual([]);
  });

  it('constrains nothing in metadata but name and generateName (the apiserver refuses more)', () => {
    const metadata = (schema.properties as Record<string, Schema>).metadata;
    expect(Object.keys(metadata?.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName')).toEqual([]);
  });

  it('gives the API a strict schema without touching the CRD', () => {
    const before = structuredClone(schema);
    const api = toApiSchema(schema);
    expect(schema).toEqual(before);
    const spec = (api.properties as Record<string, Schema>).spec;
    expect(api.additionalProperties).toBe(false);
    expect(spec?.additionalProperties).toBe(false);
    expect((spec?.properties?.resources?.properties?.cpu as Schema).anyOf).toEqual([{ type: 'number' }, { type: 'string' }]);
    expect(spec?.properties?.nodeSelector?.additionalProperties).toEqual({ type: 'string' });
  });
});

describe('isDns1123Label', () => {
  const cases: Array<[string, boolean]> = [
    ['my-name', true],
    ['123-abc', true],
    ['a', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['', false],
    ['My-Name', false],
    ['-a', false],
    ['a-', false],
    ['a.b', false],
    ['a_b', false],
  ];
  it.each(cases)('%j → %j', (name, expected) => {
    expect(isDns1123Label(name)).toBe(expected);
  });
});

interface Schema {
  [keyword: string]: unknown;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
}

function visit(node: Schema, where: string, check: (node: Schema, where: string) => void): void {
  check(node, where || '(root)');
  for (const [name, child] of Object.entries(node.properties ?? {})) visit(child, `${where}.${name}`, check);
  if (typeof node.additionalProperties === 'object') visit(node.additionalProperties, `${where}{}`, check);
  if (node.items !== undefined) visit(node.items as Schema, `${where}[]`, check);
}
