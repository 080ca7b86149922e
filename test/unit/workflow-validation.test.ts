import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect } from 'vitest';
import { parse } from 'yaml';
import { parseManifests } from '../../src/api/validation/manifest.js';
import { readCrdSchema, toApiSchema } from '../../src/api/validation/schema.js';
import { readWorkflowSubmission, validateWorkflow } from '../../src/api/validation/workflow.js';
import { nameWorkflow } from '../../src/domain/workflow-request.js';
import type { ValidationDetail } from '../../src/errors/validation-error.js';
import { projectRoot } from '../../src/paths.js';
import type { WorkflowRequest } from '../../src/domain/resources.js';
import { detailsOf } from '../helpers/validation.js';

const MAX_JOBS = 500;

/** A workflow named `ci` in pool `ci`; its jobs start at line 11. */
function workflow(jobs: string, header: { metadata?: string; pool?: string } = {}): string {
  return `apiVersion: fencer.dev/v1
kind: Workflow
metadata:
${header.metadata ?? '  name: ci\n  namespace: builds\n  labels:\n    team: platform\n'}spec:
  pool: ${header.pool ?? 'ci'}
  jobs:
${jobs}`;
}

const SMALL = '{resources: {cpu: 1, memory: 1Gi}, duration: 1m}';

/** Builds on three systems, tests each, then one release: line numbers do not matter here. */
const CI = workflow(
  ['linux', 'windows', 'macos']
    .flatMap((os, i) => [
      `    - name: build-${os}`,
      `      template: {resources: {cpu: 2, memory: 4Gi}, duration: ${[2, 4, 3][i]}m, nodeSelector: {os: ${os}}, image: ghcr.io/acme/builder:1.4}`,
      `    - name: test-${os}`,
      `      needs: [build-${os}]`,
      `      template: {resources: {cpu: 1, memory: 2Gi}, duration: ${[5, 6, 5][i]}m, nodeSelector: {os: ${os}}, retryPolicy: Never}`,
    ])
    .concat([
      '    - name: release',
      '      needs: [test-linux, test-windows, test-macos]',
      '      template: {resources: {cpu: 500m, memory: 512Mi}, duration: 1m, nodeSelector: {os: linux}, startAfter: 0s}',
      '',
    ])
    .join('\n'),
);

function validate(text: string, maxJobs = MAX_JOBS): WorkflowRequest {
  const manifests = parseManifests(text);
  expect(manifests.length).toBe(1);
  return validateWorkflow(manifests[0]!, { maxJobs });
}

describe('validateWorkflow accepts', () => {
  it('a CI pipeline: one Job per job, named <workflow>-<job>, in the pool, with full needs and the remaining path', () => {
    const request = validate(CI);
    expect(request).toMatchObject({
      namespace: 'builds',
      name: 'ci',
      generateName: null,
      labels: { team: 'platform' },
    });
    expect(request.spec.pool).toBe('ci');
    expect(request.jobs.map((j) => [j.name, j.needs, j.pathMs / 1000])).toEqual([
      ['ci-build-linux', [], 120 + 300 + 60],
      ['ci-test-linux', ['ci-build-linux'], 300 + 60],
      ['ci-build-windows', [], 240 + 360 + 60],
      ['ci-test-windows', ['ci-build-windows'], 360 + 60],
      ['ci-build-macos', [], 180 + 300 + 60],
      ['ci-test-macos', ['ci-build-macos'], 300 + 60],
      ['ci-release', ['ci-test-linux', 'ci-test-windows', 'ci-test-macos'], 60],
    ]);
    expect(request.jobs[1]).toEqual({
      namespace: 'builds',
      name: 'ci-test-linux',
      generateName: null,
      labels: { team: 'platform', 'fencer.dev/workflow': 'ci', 'fencer.dev/workflow-job': 'test-linux' },
      spec: {
        resources: { cpu: 1, memory: '2Gi' },
        duration: '5m',
        nodeSelector: { os: 'linux' },
        retryPolicy: 'Never',
        maxAttempts: 3,
        maxDisruptions: 10,
      },
      cpuMillis: 1000,
      memoryBytes: 2 * 1024 ** 3,
      durationMs: 300_000,
      nodeSelector: { os: 'linux' },
      maxAttempts: 3,
      image: null,
      pool: 'ci',
      retryPolicy: 'Never',
      backoffBaseMs: 1000,
      backoffCapMs: 300_000,
      startAt: null,
      startAfterMs: null,
      needs: ['ci-build-linux'],
      pathMs: 360_000,
      workflow: 'ci',
      queue: 'default',
      priority: 0,
    });
    expect(request.jobs.map((j) => j.image)).toEqual([
      'ghcr.io/acme/builder:1.4',
      null,
      'ghcr.io/acme/builder:1.4',
      null,
      'ghcr.io/acme/builder:1.4',
      null,
      null,
    ]);
    expect(request.jobs[6]).toMatchObject({ startAfterMs: 0, nodeSelector: { os: 'linux' }, cpuMillis: 500 });
  });

  it('keeps the spec with each template as its Job stores it (the defaults filled in)', () => {
    const request = validate(CI);
    expect(request.spec.jobs.map((j) => j.template)).toEqual(request.jobs.map((j) => j.spec));
    expect(request.spec.jobs[1]).toMatchObject({ name: 'test-linux', needs: ['build-linux'] });
  });

  it('no pool, and a template that selects one itself; the default namespace', () => {
    const text = workflow(
      `    - name: render\n      template: {resources: {cpu: 1, memory: 1Gi}, duration: 1m, nodeSelector: {pool: gpu}}\n`,
      {
        metadata: '  name: films\n',
      },
    ).replace('  pool: ci\n', '');
    const request = validate(text);
    expect(request).toMatchObject({ namespace: 'default', name: 'films', labels: {} });
    expect(request.jobs[0]).toMatchObject({
      name: 'films-render',
      pool: null,
      nodeSelector: { pool: 'gpu' },
      namespace: 'default',
    });
  });

  it("a template whose nodeSelector names the workflow's own pool", () => {
    const request = validate(
      workflow(
        `    - name: a\n      template: {resources: {cpu: 1, memory: 1Gi}, duration: 1m, nodeSelector: {pool: ci}}\n`,
      ),
    );
    expect(request.jobs[0]).toMatchObject({ pool: 'ci', nodeSelector: { pool: 'ci' } });
  });

  it("a generateName: the jobs keep their own names until nameWorkflow gives them the workflow's", () => {
    const unnamed = validate(CI.replace('  name: ci\n', '  generateName: ci-\n'));
    expect(unnamed).toMatchObject({ name: '', generateName: 'ci-' });
    expect(unnamed.jobs.map((j) => [j.name, j.generateName, j.workflow])[6]).toEqual(['release', null, '']);
    expect(unnamed.jobs[6]?.needs).toEqual(['test-linux', 'test-windows', 'test-macos']);
    expect(unnamed.jobs[6]?.labels).toEqual({ team: 'platform', 'fencer.dev/workflow-job': 'release' });

    const named = nameWorkflow(unnamed, 'ci-x7k2p');
    const direct = validate(CI.replace('  name: ci\n', '  name: ci-x7k2p\n'));
    expect(named).toEqual({ ...direct, generateName: 'ci-' });
  });
});

describe('validateWorkflow refuses', () => {
  const cases: Array<{ name: string; text: string; maxJobs?: number; details: ValidationDetail[] }> = [
    {
      name: 'a cycle, named, at the needs of its first job',
      text: workflow(
        `    - name: lint\n      template: ${SMALL}\n    - name: build\n      needs: [lint, test]\n      template: ${SMALL}\n    - name: test\n      needs: [build]\n      template: ${SMALL}\n`,
      ),
      details: [{ path: 'spec.jobs[1].needs', message: 'cycle: build → test → build', line: 14 }],
    },
    {
      name: 'a cycle of three, written the way work flows',
      text: workflow(
        `    - name: a\n      needs: [c]\n      template: ${SMALL}\n    - name: b\n      needs: [a]\n      template: ${SMALL}\n    - name: c\n      needs: [b]\n      template: ${SMALL}\n`,
      ),
      details: [{ path: 'spec.jobs[0].needs', message: 'cycle: a → b → c → a', line: 12 }],
    },
    {
      name: 'a job that needs itself',
      text: workflow(`    - name: a\n      needs: [a]\n      template: ${SMALL}\n`),
      details: [{ path: 'spec.jobs[0].needs', message: 'cycle: a → a', line: 12 }],
    },
    {
      name: 'a need on a job not in the workflow, and one written twice',
      text: workflow(
        `    - name: build\n      template: ${SMALL}\n    - name: test\n      needs: [build]\n      template: ${SMALL}\n` +
          `    - name: release\n      needs:\n        - tset\n        - build\n        - build\n      template: ${SMALL}\n`,
      ),
      details: [
        { path: 'spec.jobs[2].needs[0]', message: '"tset" is not a job of this workflow', line: 18 },
        { path: 'spec.jobs[2].needs[2]', message: 'Duplicate value: "build"', line: 20 },
      ],
    },
    {
      name: 'a job name written twice',
      text: workflow(`    - name: build\n      template: ${SMALL}\n    - name: build\n      template: ${SMALL}\n`),
      details: [{ path: 'spec.jobs[1].name', message: 'Duplicate value: "build"', line: 13 }],
    },
    {
      name: 'more jobs than a workflow may have',
      text: workflow(Array.from({ length: 600 }, (_, i) => `    - {name: j${i}, template: ${SMALL}}\n`).join('')),
      details: [{ path: 'spec.jobs', message: '600 jobs, at most 500', line: 10 }],
    },
    {
      name: 'no jobs',
      text: workflow('').replace('  jobs:\n', '  jobs: []\n'),
      details: [{ path: 'spec.jobs', message: 'must not be empty', line: 10 }],
    },
    {
      name: "a template that selects another pool than the workflow's",
      text: workflow(
        `    - name: train\n      template:\n        resources: {cpu: 1, memory: 1Gi}\n        duration: 1m\n        nodeSelector:\n          pool: gpu\n`,
      ),
      details: [
        {
          path: 'spec.jobs[0].template.nodeSelector.pool',
          message: '"gpu" differs from spec.pool "ci": every job of a workflow runs in its pool',
          line: 16,
        },
      ],
    },
    {
      name: 'a job name that is not a DNS-1123 label',
      text: workflow(`    - name: Build_Linux\n      template: ${SMALL}\n`),
      details: [
        {
          path: 'spec.jobs[0].name',
          message:
            '"Build_Linux" is not a valid job name: a lowercase RFC 1123 label must consist of lower case alphanumeric ' +
            "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', " +
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
          line: 11,
        },
      ],
    },
    {
      name: 'a job whose Job name, <workflow>-<job>, would pass 63 characters',
      text: workflow(
        `    - name: ${'j'.repeat(61)}\n      template: ${SMALL}\n    - name: ${'k'.repeat(60)}\n      template: ${SMALL}\n`,
      ),
      details: [
        {
          path: 'spec.jobs[0].name',
          message: `its Job's name "ci-${'j'.repeat(61)}" must be no more than 63 characters`,
          line: 11,
        },
      ],
    },
    {
      name: 'the same with a generateName, counting the five characters the server appends',
      text: workflow(
        `    - name: ${'j'.repeat(55)}\n      template: ${SMALL}\n    - name: ${'k'.repeat(54)}\n      template: ${SMALL}\n`,
        {
          metadata: '  generateName: ci-\n',
        },
      ),
      details: [
        {
          path: 'spec.jobs[0].name',
          message:
            "its Job's name (generateName, 5 random characters, '-', this name) must be no more than 63 characters, not 64",
          line: 8,
        },
      ],
    },
    {
      name: "a template that is not a good Job spec, at the template's path",
      text: workflow(
        `    - name: build\n      template:\n        resources: {cpu: abc, memory: 1Gi}\n        duration: 1m\n        simulate: {failAfter: 2m}\n` +
          `    - name: test\n      template: {resources: {cpu: 1, memory: 1Gi}, duration: 1m, retries: 3}\n`,
      ),
      details: [
        { path: 'spec.jobs[1].template.retries', message: 'unknown field', line: 17 },
        { path: 'spec.jobs[0].template.resources.cpu', message: '"abc" is not a CPU quantity', line: 13 },
        {
          path: 'spec.jobs[0].template.simulate.failAfter',
          message: 'must be shorter than spec.jobs[0].template.duration (1m)',
          line: 15,
        },
      ],
    },
    {
      name: 'a job without a template, a pool that is no label value, a missing name',
      text: workflow(`    - name: build\n`, { metadata: '  labels: {team: platform}\n', pool: '"c i"' }),
      details: [
        { path: 'spec.jobs[0].template', message: 'Required value', line: 8 },
        { path: 'metadata.name', message: 'Required value: name or generateName is required', line: 3 },
        {
          path: 'spec.pool',
          message:
            "\"c i\" is not a valid pool: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and " +
            "must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')",
          line: 6,
        },
      ],
    },
    {
      name: 'every problem of the graph at once',
      text: workflow(
        `    - name: build\n      template: ${SMALL}\n    - name: build\n      needs: [lint]\n      template: {resources: {cpu: 1, memory: 1Gi}, duration: 1m, nodeSelector: {pool: gpu}}\n`,
      ),
      details: [
        { path: 'spec.jobs[1].name', message: 'Duplicate value: "build"', line: 13 },
        {
          path: 'spec.jobs[1].template.nodeSelector.pool',
          message: '"gpu" differs from spec.pool "ci": every job of a workflow runs in its pool',
          line: 15,
        },
        { path: 'spec.jobs[1].needs[0]', message: '"lint" is not a job of this workflow', line: 14 },
      ],
    },
    {
      name: 'another kind (and nothing else about it)',
      text: 'apiVersion: fencer.dev/v1\nkind: Job\nspec: {jobs: 3}\n',
      details: [{ path: 'kind', message: '"Job" is not a known kind (expected Workflow)', line: 2 }],
    },
  ];
  it.each(cases)('$name', ({ text, maxJobs, details }) => {
    expect(detailsOf(() => validate(text, maxJobs))).toEqual(details);
  });

  it('names the cycle and its line in the error message', () => {
    const text = workflow(
      `    - name: build\n      needs: [test]\n      template: ${SMALL}\n    - name: test\n      needs: [build]\n      template: ${SMALL}\n`,
    );
    expect(() => validate(text)).toThrow('spec.jobs[0].needs: cycle: build → test → build (line 12)');
  });
});

describe('readWorkflowSubmission', () => {
  it('reads one workflow, in YAML or JSON alike', () => {
    const json = JSON.stringify(parse(CI));
    expect(readWorkflowSubmission(json, 'application/json', MAX_JOBS)).toEqual(
      readWorkflowSubmission(CI, 'application/yaml', MAX_JOBS),
    );
  });

  it('refuses several documents: one workflow per request', () => {
    expect(detailsOf(() => readWorkflowSubmission(`${CI}---\n${CI}`, undefined, MAX_JOBS))).toEqual([
      { path: '', message: '2 documents: submit one workflow per request' },
    ]);
  });

  it('passes the limit on jobs', () => {
    expect(detailsOf(() => readWorkflowSubmission(CI, undefined, 6))).toEqual([
      { path: 'spec.jobs', message: '7 jobs, at most 6', line: 10 },
    ]);
  });
});

describe('the Workflow CRD', () => {
  const crd = parse(readFileSync(join(projectRoot(), 'crds/workflow.yaml'), 'utf8')) as {
    spec: {
      versions: Array<{
        name: string;
        subresources?: { status?: object };
        additionalPrinterColumns?: Array<{ name: string; jsonPath: string }>;
      }>;
    };
  };
  const schema = readCrdSchema('crds/workflow.yaml');
  const properties = (node: Schema | undefined): Record<string, Schema> => node?.properties ?? {};

  it('is a namespaced v1 CRD for workflows.fencer.dev with a status subresource and printer columns', () => {
    expect(crd).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'workflows.fencer.dev' },
      spec: {
        group: 'fencer.dev',
        scope: 'Namespaced',
        names: {
          kind: 'Workflow',
          listKind: 'WorkflowList',
          plural: 'workflows',
          singular: 'workflow',
          shortNames: ['fwf'],
          categories: ['fencer'],
        },
      },
    });
    const [v1] = crd.spec.versions;
    expect(v1?.name).toBe('v1');
    expect(v1?.subresources?.status).toEqual({});
    expect(v1?.additionalPrinterColumns?.map((c) => [c.name, c.jsonPath])).toEqual([
      ['Phase', '.status.phase'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it("has, as each job's template, exactly the Job CRD's spec schema", () => {
    const jobSpec = properties(readCrdSchema('crds/job.yaml') as Schema).spec;
    const template = properties(properties(properties(schema as Schema).spec).jobs?.items as Schema).template;
    expect(template).toBeDefined();
    expect(template).toEqual(jobSpec);
  });

  it('is structural: every field has a type, no properties next to additionalProperties', () => {
    const problems: string[] = [];
    visit(schema as Schema, '', (node, where) => {
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

  it('has the status fencer writes: a phase, each job as it stands, times and conditions', () => {
    const status = properties(properties(schema as Schema).status);
    expect(status.phase?.enum).toEqual(['Running', 'Succeeded', 'Failed', 'Cancelled']);
    expect(Object.keys(properties(status.jobs?.items as Schema))).toEqual(['name', 'job', 'phase', 'stage', 'reason']);
    expect(Object.keys(status)).toEqual(['phase', 'jobs', 'startTime', 'completionTime', 'conditions']);
    const jobConditions = properties(properties(readCrdSchema('crds/job.yaml') as Schema).status).conditions;
    expect(status.conditions).toEqual(jobConditions);
  });

  it('constrains nothing in metadata but name and generateName', () => {
    expect(
      Object.keys(properties(properties(schema as Schema).metadata)).filter(
        (k) => k !== 'name' && k !== 'generateName',
      ),
    ).toEqual([]);
  });

  it('gives the API a strict schema down into the templates', () => {
    const api = toApiSchema(schema) as Schema;
    const template = properties(properties(properties(api).spec).jobs?.items as Schema).template;
    expect(template?.additionalProperties).toBe(false);
    expect(properties(api).status).toEqual({});
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
