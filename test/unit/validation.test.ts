import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect } from 'vitest';
import { parse } from 'yaml';
import { validateJob } from '../../src/api/validation/job.js';
import { SPEC_DEFAULTS } from '../../src/domain/job-request.js';
import { firstDuplicateKeyOffset, parseManifests } from '../../src/api/validation/manifest.js';
import { readCrdSchema, toApiSchema } from '../../src/api/validation/schema.js';
import { parseDateTime } from '../../src/domain/date-time.js';
import type { ValidationDetail } from '../../src/errors/validation-error.js';
import { isDns1123Label } from '../../src/domain/names.js';
import { projectRoot } from '../../src/paths.js';
import type { JobRequest } from '../../src/domain/resources.js';
import { detailsOf } from '../helpers/validation.js';

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

function validateText(text: string, contentType?: string): JobRequest[] {
  return parseManifests(text, contentType).map(validateJob);
}

describe('validateJob accepts', () => {
  it('a good manifest as the JobRequest the scheduler needs', () => {
    expect(validateText(GOOD)).toEqual([
      {
        namespace: 'films',
        name: 'render-frames',
        generateName: null,
        labels: { 'app.kubernetes.io/name': 'render' },
        spec: {
          resources: { cpu: '500m', memory: '256Mi' },
          duration: '1m30s',
          nodeSelector: { pool: 'gpu' },
          maxAttempts: 3,
          maxDisruptions: 10,
          retryPolicy: 'OnFailure',
        },
        cpuMillis: 500,
        memoryBytes: 268_435_456,
        durationMs: 90_000,
        nodeSelector: { pool: 'gpu' },
        maxAttempts: 3,
        image: null,
        pool: null,
        retryPolicy: 'OnFailure',
        backoffBaseMs: 1000,
        backoffCapMs: 300_000,
        startAt: null,
        startAfterMs: null,
        needs: [],
        pathMs: 90_000,
        workflow: null,
        queue: 'default',
        priority: 0,
      },
    ]);
  });

  it('the lifecycle fields, with the CRD defaults filled in the spec as the apiserver would', () => {
    const [job] = validateText(
      withSpec(
        '  resources: {cpu: 1, memory: 1Gi}\n  duration: 2m\n  image: ghcr.io/acme/builder:1.4\n  retryPolicy: Never\n' +
          '  backoff: {base: 500ms}\n  startAt: 2026-01-02T16:04:05.5+01:00\n  simulate: {failAttempts: 2, failAfter: 1m59s}\n',
      ),
    );
    expect(job).toMatchObject({
      image: 'ghcr.io/acme/builder:1.4',
      retryPolicy: 'Never',
      backoffBaseMs: 500,
      backoffCapMs: 300_000,
      startAt: '2026-01-02T15:04:05.500Z',
      startAfterMs: null,
      pathMs: 120_000,
    });
    expect(job?.spec).toEqual({
      resources: { cpu: 1, memory: '1Gi' },
      duration: '2m',
      image: 'ghcr.io/acme/builder:1.4',
      maxAttempts: 3,
      maxDisruptions: 10,
      retryPolicy: 'Never',
      backoff: { base: '500ms', cap: '5m' },
      startAt: '2026-01-02T16:04:05.5+01:00',
      simulate: { failAttempts: 2, exitCode: 1, failAfter: '1m59s' },
    });
  });

  it('startAfter, zero included; a backoff cap alone', () => {
    const job = (extra: string) =>
      validateText(withSpec(`  resources: {cpu: 1, memory: 1Gi}\n  duration: 2m\n${extra}`))[0];
    expect(job('  startAfter: 1h30m\n')).toMatchObject({ startAt: null, startAfterMs: 5_400_000 });
    expect(job('  startAfter: 0s\n')).toMatchObject({ startAfterMs: 0 });
    expect(job('  backoff: {cap: 10s}\n')).toMatchObject({
      backoffBaseMs: 1000,
      backoffCapMs: 10_000,
      spec: { backoff: { base: '1s', cap: '10s' } },
    });
    expect(job('  simulate: {exitCode: 255, failAfter: 0s}\n')?.spec.simulate).toEqual({
      exitCode: 255,
      failAfter: '0s',
    });
  });

  it('a generateName instead of a name: the name is left to the server', () => {
    const text = GOOD.replace('name: render-frames', 'generateName: render-');
    expect(validateText(text)[0]).toMatchObject({ name: '', generateName: 'render-' });
    expect(
      validateText(text.replace('generateName: render-', `generateName: ${'a'.repeat(58)}`))[0]?.generateName,
    ).toBe('a'.repeat(58));
  });

  it('a name beside a generateName: the name wins, as in Kubernetes', () => {
    const [job] = validateText(GOOD.replace('name: render-frames', 'name: render-frames\n  generateName: render-'));
    expect(job).toMatchObject({ name: 'render-frames', generateName: null });
  });

  it('defaults: namespace "default", no labels, no selector; numbers as quantities', () => {
    const [job] = validateText(
      withSpec('  resources: {cpu: 2, memory: 1073741824}\n  duration: 5m\n  maxAttempts: 1\n'),
    );
    expect(job).toMatchObject({
      namespace: 'default',
      labels: {},
      nodeSelector: {},
      cpuMillis: 2000,
      memoryBytes: 1_073_741_824,
      durationMs: 300_000,
      maxAttempts: 1,
      spec: {
        resources: { cpu: 2, memory: 1_073_741_824 },
        duration: '5m',
        maxAttempts: 1,
        maxDisruptions: 10,
        retryPolicy: 'OnFailure',
      },
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
      text:
        withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: forever\n---\n') +
        withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 0s\n'),
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
        { path: 'metadata.name', message: 'Required value: name or generateName is required', line: 3 },
      ],
    },
    {
      name: 'an empty generateName is no name',
      text: 'apiVersion: fencer.dev/v1\nkind: Job\nmetadata:\n  generateName: ""\nspec: {resources: {cpu: 1, memory: 1Gi}, duration: 1s}\n',
      details: [{ path: 'metadata.name', message: 'Required value: name or generateName is required', line: 3 }],
    },
    {
      name: 'a generateName too long for the five characters after it',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n').replace(
        '  name: job-1',
        `  generateName: ${'a'.repeat(59)}`,
      ),
      details: [
        {
          path: 'metadata.generateName',
          message: 'must be no more than 58 characters (the server appends 5)',
          line: 4,
        },
      ],
    },
    {
      name: 'a generateName that is not a label prefix',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n').replace(
        '  name: job-1',
        '  generateName: -Build_',
      ),
      details: [
        {
          path: 'metadata.generateName',
          message:
            '"-Build_" is not a valid generateName: it must consist of lower case alphanumeric characters or \'-\', ' +
            "and must start with an alphanumeric character (e.g. 'build-')",
          line: 4,
        },
      ],
    },
    {
      name: 'an empty image, an unknown retryPolicy, a zero and a bad backoff',
      text: withSpec(
        '  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n  image: ""\n  retryPolicy: Always\n  backoff:\n    base: 0s\n    cap: soon\n',
      ),
      details: [
        { path: 'spec.image', message: 'must not be empty', line: 8 },
        { path: 'spec.retryPolicy', message: '"Always" is not one of OnFailure, Never', line: 9 },
        { path: 'spec.backoff.base', message: 'must be greater than zero', line: 11 },
        { path: 'spec.backoff.cap', message: '"soon" is not a duration (use 30s, 5m, 1h)', line: 12 },
      ],
    },
    {
      name: 'startAt and startAfter together',
      text: withSpec(
        '  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n  startAt: 2026-01-02T15:04:05Z\n  startAfter: 5m\n',
      ),
      details: [{ path: 'spec.startAfter', message: 'at most one of startAt and startAfter', line: 9 }],
    },
    {
      name: 'a startAt on a day that does not exist',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n  startAt: "2026-02-30T10:00:00Z"\n'),
      details: [
        {
          path: 'spec.startAt',
          message: '"2026-02-30T10:00:00Z" is not an RFC 3339 date-time (e.g. 2026-01-02T15:04:05Z)',
          line: 8,
        },
      ],
    },
    {
      name: 'a startAt that is a date only',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n  startAt: "2026-01-02"\n'),
      details: [
        {
          path: 'spec.startAt',
          message: '"2026-01-02" is not an RFC 3339 date-time (e.g. 2026-01-02T15:04:05Z)',
          line: 8,
        },
      ],
    },
    {
      name: 'a negative startAfter',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n  startAfter: -5s\n'),
      details: [{ path: 'spec.startAfter', message: '"-5s" is not a duration (use 30s, 5m, 1h)', line: 8 }],
    },
    {
      name: 'simulate: negative failAttempts, an exit code out of range, an unknown field',
      text: withSpec(
        '  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n  simulate:\n    failAttempts: -1\n    exitCode: 256\n    crash: true\n',
      ),
      details: [
        { path: 'spec.simulate.crash', message: 'unknown field', line: 11 },
        { path: 'spec.simulate.failAttempts', message: 'must be at least 0', line: 9 },
        { path: 'spec.simulate.exitCode', message: 'must be at most 255', line: 10 },
      ],
    },
    {
      name: 'simulate: exit code zero, a fraction of a run',
      text: withSpec(
        '  resources: {cpu: 1, memory: 1Gi}\n  duration: 1s\n  simulate: {failAttempts: 1.5, exitCode: 0}\n',
      ),
      details: [
        { path: 'spec.simulate.failAttempts', message: 'must be an integer, not a number', line: 8 },
        { path: 'spec.simulate.exitCode', message: 'must be at least 1', line: 8 },
      ],
    },
    {
      name: 'simulate: a failAfter as long as the run',
      text: withSpec('  resources: {cpu: 1, memory: 1Gi}\n  duration: 1m30s\n  simulate:\n    failAfter: 90s\n'),
      details: [{ path: 'spec.simulate.failAfter', message: 'must be shorter than spec.duration (1m30s)', line: 9 }],
    },
    {
      name: 'maxAttempts below one, a non-string selector and label',
      text: `${GOOD}  maxAttempts: 0\n`
        .replace('pool: gpu', 'pool: 7')
        .replace('name: render\n', 'name: render\n    tier: true\n'),
      details: [
        { path: 'metadata.labels.tier', message: 'must be a string, not a boolean', line: 8 },
        { path: 'spec.nodeSelector.pool', message: 'must be a string, not an integer', line: 15 },
        { path: 'spec.maxAttempts', message: 'must be at least 1', line: 16 },
      ],
    },
    {
      name: 'a bad name and namespace',
      text: GOOD.replace('name: render-frames', 'name: Render_Frames').replace(
        'namespace: films',
        `namespace: ${'a'.repeat(64)}`,
      ),
      details: [
        {
          path: 'metadata.name',
          message:
            '"Render_Frames" is not a valid name: a lowercase RFC 1123 label must consist of lower case alphanumeric ' +
            "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', " +
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
          line: 4,
        },
        {
          path: 'metadata.namespace',
          message: `"${'a'.repeat(64)}" is not a valid namespace: must be no more than 63 characters`,
          line: 5,
        },
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
  const cases: Array<{ name: string; text: string; contentType?: string; line: number | undefined; message: RegExp }> =
    [
      {
        name: 'YAML with a bad indent',
        text: 'apiVersion: fencer.dev/v1\nkind: Job\nspec:\n  duration: 1s\n resources: {}\n',
        line: 5,
        message: /^invalid YAML: /,
      },
      {
        name: 'YAML with an unclosed flow sequence',
        text: 'kind: Job\nspec:\n  nodeSelector: [a, b\nmetadata: {}\n',
        line: 4,
        message: /^invalid YAML: /,
      },
      {
        name: 'YAML with a key written twice',
        text: 'kind: Job\nspec: {}\nkind: Job\n',
        line: 3,
        message: /^invalid YAML: Map keys must be unique/,
      },
      {
        name: 'a bad second document',
        text: `${GOOD}---\nkind: Job\nspec: [a\n`,
        line: 18,
        message: /^invalid YAML: /,
      },
      {
        name: 'JSON with a stray comma',
        text: '{\n  "kind": "Job",\n  "spec": [1,,2]\n}',
        line: 3,
        message: /^invalid JSON: Unexpected token ','$/,
      },
      { name: 'JSON with a trailing comma', text: '{\n  "kind": "Job",\n}', line: 3, message: /^invalid JSON: / },
      {
        name: 'JSON cut short',
        text: '{\n  "kind": "Job",\n  "spec": [1,',
        line: 3,
        message: /^invalid JSON: Unexpected end of JSON input$/,
      },
      {
        name: 'JSON by content type that is YAML',
        text: 'kind: Job\n',
        contentType: 'application/json',
        line: 1,
        message: /^invalid JSON: /,
      },
      {
        name: 'JSON with a key written twice',
        text: '{\n"kind": "Job",\n"kind": "Job"\n}',
        line: 3,
        message: /^invalid JSON: Map keys must be unique/,
      },
      { name: 'empty input', text: '', line: undefined, message: /^no manifest in the input/ },
      {
        name: 'only comments and separators',
        text: '# nothing\n---\n---\n',
        line: undefined,
        message: /^no manifest in the input/,
      },
    ];
  it.each(cases)('$name', ({ text, contentType, line, message }) => {
    const [detail, ...more] = detailsOf(() => parseManifests(text, contentType));
    expect(more).toEqual([]);
    expect(detail?.path).toBe('');
    expect(detail?.line).toBe(line);
    expect(detail?.message).toMatch(message);
  });
});

describe('firstDuplicateKeyOffset (JSON read without the yaml parser)', () => {
  it.each([
    { text: '{"a":1,"a":2}', at: 7 },
    { text: '[{"a":1},{"b":{"c":1,"c":2}}]', at: 21 },
    { text: '{"a":"}{\\",\\"a\\":","a":1}', at: 19 },
    { text: '{"a":1,"\\u0061":2}', at: 7 },
    { text: '{"a":{"a":1},"b":[{"a":1,"b":2}],"c":"a"}', at: -1 },
    { text: '[{"a":1},{"a":2}]', at: -1 },
    { text: '{"a":["a","a"],"b":{}}', at: -1 },
  ])('$text: $at', ({ text, at }) => {
    JSON.parse(text);
    expect(firstDuplicateKeyOffset(text)).toBe(at);
  });

  it('a key written twice after a lone CR (a line break to JSON, not to yaml) is refused too', () => {
    const [detail, ...more] = detailsOf(() => parseManifests('{"kind": "Job",\r"kind": "Job"}'));
    expect(more).toEqual([]);
    expect(detail).toMatchObject({ path: '', line: 1, message: 'invalid JSON: Map keys must be unique' });
  });

  it('a nested key written twice is refused with its line, as the YAML reader does', () => {
    const [detail] = detailsOf(() => parseManifests('[\n{"kind": "Job"},\n{"spec": {"a": 1,\n"a": 2}}\n]'));
    expect(detail).toMatchObject({ path: '', line: 4 });
    expect(detail?.message).toMatch(/^invalid JSON: Map keys must be unique/);
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
      names: { kind: string; plural: string; categories?: string[] };
      versions: Array<{
        name: string;
        subresources?: { status?: object };
        additionalPrinterColumns?: Array<{ name: string; jsonPath: string }>;
      }>;
    };
  };
  const schema = readCrdSchema('crds/job.yaml');

  it('is a namespaced v1 CRD for jobs.fencer.dev with a status subresource and printer columns', () => {
    expect(crd).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'jobs.fencer.dev' },
      spec: {
        group: 'fencer.dev',
        scope: 'Namespaced',
        names: { kind: 'Job', plural: 'jobs', categories: ['fencer'] },
      },
    });
    const [v1] = crd.spec.versions;
    expect(v1?.name).toBe('v1');
    expect(v1?.subresources?.status).toEqual({});
    expect(v1?.additionalPrinterColumns?.map((c) => c.jsonPath)).toEqual([
      '.status.phase',
      '.status.node',
      '.metadata.creationTimestamp',
    ]);
  });

  it('is structural: every field has a type, no properties next to additionalProperties', () => {
    const problems: string[] = [];
    visit(schema, '', (node, where) => {
      if (node.properties !== undefined && node.additionalProperties !== undefined)
        problems.push(`${where}: properties and additionalProperties`);
      if (
        node.type === undefined &&
        node['x-kubernetes-int-or-string'] !== true &&
        node['x-kubernetes-preserve-unknown-fields'] !== true
      ) {
        problems.push(`${where}: no type`);
      }
    });
    expect(problems).toEqual([]);
  });

  it('constrains nothing in metadata but name and generateName (the apiserver refuses more)', () => {
    const metadata = (schema.properties as Record<string, Schema>).metadata;
    expect(Object.keys(metadata?.properties ?? {}).filter((k) => k !== 'name' && k !== 'generateName')).toEqual([]);
  });

  it('declares the defaults validateJob fills in', () => {
    const spec = (schema.properties as Record<string, Schema>).spec!.properties!;
    const defaults = {
      maxAttempts: spec.maxAttempts?.default,
      maxDisruptions: spec.maxDisruptions?.default,
      retryPolicy: spec.retryPolicy?.default,
      backoff: { base: spec.backoff?.properties?.base?.default, cap: spec.backoff?.properties?.cap?.default },
      simulate: { exitCode: spec.simulate?.properties?.exitCode?.default },
    };
    expect(defaults).toEqual(SPEC_DEFAULTS);
    expect(SPEC_DEFAULTS.backoff).toEqual({ base: '1s', cap: '5m' });
  });

  it('gives the API a strict schema without touching the CRD', () => {
    const before = structuredClone(schema);
    const api = toApiSchema(schema);
    expect(schema).toEqual(before);
    const spec = (api.properties as Record<string, Schema>).spec;
    expect(api.additionalProperties).toBe(false);
    expect(spec?.additionalProperties).toBe(false);
    expect((spec?.properties?.resources?.properties?.cpu as Schema).anyOf).toEqual([
      { type: 'number' },
      { type: 'string' },
    ]);
    expect(spec?.properties?.nodeSelector?.additionalProperties).toEqual({ type: 'string' });
  });
});

describe('parseDateTime (the date-time format of the CRDs)', () => {
  const cases: Array<[string, string | null]> = [
    ['2026-01-02T15:04:05Z', '2026-01-02T15:04:05.000Z'],
    ['2026-01-02t15:04:05z', '2026-01-02T15:04:05.000Z'],
    ['2026-01-02T16:04:05.123456+01:00', '2026-01-02T15:04:05.123Z'],
    ['2026-01-02T10:04:05-05:00', '2026-01-02T15:04:05.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['1900-02-29T00:00:00Z', null],
    ['2026-02-29T00:00:00Z', null],
    ['2026-04-31T00:00:00Z', null],
    ['2026-13-01T00:00:00Z', null],
    ['2026-00-01T00:00:00Z', null],
    ['2026-01-00T00:00:00Z', null],
    ['2026-01-01T24:00:00Z', null],
    ['2026-01-01T23:60:00Z', null],
    ['2026-01-01T23:59:60Z', null],
    ['2026-01-01T10:00:00+24:00', null],
    ['2026-01-01T10:00:00', null],
    ['2026-01-01 10:00:00Z', null],
    ['2026-01-01', null],
    ['tomorrow', null],
  ];
  it.each(cases)('%j → %j', (text, iso) => {
    const ms = parseDateTime(text);
    expect(ms === null ? null : new Date(ms).toISOString()).toBe(iso);
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
