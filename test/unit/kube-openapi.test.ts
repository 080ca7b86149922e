// The OpenAPI documents: a schema per kind and list, named and tagged as kube-apiserver names a
// CRD's, with the CRDs' descriptions (what kubectl explain prints), references that resolve,
// and the PATCH operations kubectl looks at before it validates on the client.
import { describe, expect, it } from 'vitest';
import { fencerKinds } from '../../src/api/kube/kinds.js';
import { documentHash, openApiV2, openApiV3, openApiV3Index } from '../../src/api/kube/openapi.js';
import { toV2 } from '../../src/api/kube/openapi-schema.js';

const kinds = fencerKinds();
const KINDS = ['CronJob', 'Job', 'Node', 'Queue', 'ResourceQuota', 'Workflow'];
const v2 = openApiV2(kinds) as any;
const v3 = openApiV3(kinds, 'apis/fencer.dev/v1') as any;

/** Every $ref in a document, with where it is. */
function refs(node: unknown, where = '#'): Array<[string, string]> {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, child]): Array<[string, string]> =>
    key === '$ref' && typeof child === 'string' ? [[where, child]] : refs(child, `${where}/${key}`),
  );
}

/** Every schema node of a document's definitions, with its path. */
function nodes(node: unknown, where = ''): Array<[string, Record<string, unknown>]> {
  if (node === null || typeof node !== 'object') return [];
  return [
    [where, node as Record<string, unknown>],
    ...Object.entries(node).flatMap(([key, child]) => nodes(child, `${where}/${key}`)),
  ];
}

describe.each([
  { dialect: 'v2', document: v2, schemas: v2.definitions, prefix: '#/definitions/' },
  { dialect: 'v3', document: v3, schemas: v3.components.schemas, prefix: '#/components/schemas/' },
])('OpenAPI $dialect', ({ document, schemas, prefix }) => {
  it.each(KINDS)('has dev.fencer.v1.%s and its list, each with its group-version-kind', (kind) => {
    expect(schemas[`dev.fencer.v1.${kind}`]['x-kubernetes-group-version-kind']).toEqual([
      { group: 'fencer.dev', version: 'v1', kind },
    ]);
    expect(schemas[`dev.fencer.v1.${kind}List`]['x-kubernetes-group-version-kind']).toEqual([
      { group: 'fencer.dev', version: 'v1', kind: `${kind}List` },
    ]);
    expect(schemas[`dev.fencer.v1.${kind}List`].properties.items.items).toEqual({
      $ref: `${prefix}dev.fencer.v1.${kind}`,
    });
  });

  it("carries the CRDs' descriptions, which kubectl explain prints", () => {
    const job = schemas['dev.fencer.v1.Job'];
    expect(job.description).toBe('A job that holds CPU and memory on one node for a duration.');
    expect(job.properties.spec.properties.resources.description).toBe('What the job holds on its node while it runs.');
    expect(job.properties.spec.properties.resources.properties.cpu.description).toBe(
      'CPU as a Kubernetes quantity, e.g. 500m or 2.',
    );
    expect(job.properties.apiVersion).toEqual({ description: 'Always fencer.dev/v1.', type: 'string' });
    expect(schemas['dev.fencer.v1.Node'].properties.status.properties.phase.enum).toEqual(['Ready', 'Dead']);
  });

  it("refers to the standard ObjectMeta and ListMeta, with the CRD's words on metadata", () => {
    const metadata = schemas['dev.fencer.v1.Job'].properties.metadata;
    expect(metadata.description).toMatch(/^Standard object metadata: name \(a DNS-1123 label\)/);
    expect(refs(metadata)).toEqual([[expect.any(String), `${prefix}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`]]);
    expect(refs(schemas['dev.fencer.v1.JobList'].properties.metadata)).toEqual([
      [expect.any(String), `${prefix}io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta`],
    ]);
    expect(Object.keys(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties)).toEqual(
      expect.arrayContaining([
        'name',
        'generateName',
        'namespace',
        'labels',
        'annotations',
        'uid',
        'resourceVersion',
        'creationTimestamp',
        'managedFields',
        'ownerReferences',
      ]),
    );
  });

  it('has no reference that does not resolve', () => {
    const names = new Set(Object.keys(schemas).map((name) => `${prefix}${name}`));
    expect(refs(document).filter(([, ref]) => !names.has(ref))).toEqual([]);
  });

  it('lists a PATCH for each kind users write, with fieldValidation, so kubectl validates on the server', () => {
    const patches = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((item) =>
      item.patch ? [item.patch] : [],
    );
    const patched = patches
      .filter((op) => !op.operationId.endsWith('Status'))
      .map((op) => op['x-kubernetes-group-version-kind'].kind);
    expect(patched.sort()).toEqual(KINDS.filter((k) => k !== 'Node'));
    for (const op of patches)
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
  });

  it('lays out the paths of a namespaced kind and of a cluster-scoped one', () => {
    const methods = (path: string) => Object.keys(document.paths[path] ?? {}).sort();
    expect(methods('/apis/fencer.dev/v1/jobs')).toEqual(['get']);
    expect(methods('/apis/fencer.dev/v1/namespaces/{namespace}/jobs')).toEqual(['get', 'post']);
    expect(methods('/apis/fencer.dev/v1/namespaces/{namespace}/jobs/{name}')).toEqual([
      'delete',
      'get',
      'patch',
      'put',
    ]);
    expect(methods('/apis/fencer.dev/v1/namespaces/{namespace}/jobs/{name}/status')).toEqual(['get']);
    expect(methods('/apis/fencer.dev/v1/nodes')).toEqual(['get']);
    expect(methods('/apis/fencer.dev/v1/nodes/{name}')).toEqual(['get']);
    expect(methods('/apis/fencer.dev/v1/nodes/{name}/status')).toEqual(['get']);
    expect(document.paths['/apis/fencer.dev/v1/namespaces/{namespace}/jobs/{name}'].patch).toMatchObject({
      operationId: 'patchFencerDevV1NamespacedJob',
      tags: ['fencerDev_v1'],
      'x-kubernetes-action': 'patch',
      'x-kubernetes-group-version-kind': { group: 'fencer.dev', version: 'v1', kind: 'Job' },
    });
  });
});

describe('int-or-string, defaults and the rest that differ between the dialects', () => {
  const cpu = (schemas: any) => schemas['dev.fencer.v1.Job'].properties.spec.properties.resources.properties.cpu;

  it('v3 keeps x-kubernetes-int-or-string and spells it out as anyOf integer|string', () => {
    expect(cpu(v3.components.schemas)).toEqual({
      description: 'CPU as a Kubernetes quantity, e.g. 500m or 2.',
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    });
  });

  it('v2 keeps only the extension (Swagger 2.0 has no anyOf)', () => {
    expect(cpu(v2.definitions)).toEqual({
      description: 'CPU as a Kubernetes quantity, e.g. 500m or 2.',
      'x-kubernetes-int-or-string': true,
    });
  });

  it('v3 keeps the defaults, v2 has none', () => {
    expect(v3.components.schemas['dev.fencer.v1.Job'].properties.spec.properties.maxAttempts.default).toBe(3);
    expect(
      nodes(v2.definitions)
        .filter(([, node]) => 'default' in node && typeof node.default !== 'object')
        .map(([where]) => where),
    ).toEqual([]);
  });

  it('v3 wraps a described reference in allOf, v2 puts the description beside $ref', () => {
    expect(v3.components.schemas['dev.fencer.v1.Job'].properties.metadata).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
      default: {},
    });
    expect(v2.definitions['dev.fencer.v1.Job'].properties.metadata).toMatchObject({
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    });
  });

  it.each([
    {
      what: 'anyOf, allOf, oneOf and not go',
      schema: { type: 'string', anyOf: [{}], allOf: [{}], oneOf: [{}], not: {} },
      expected: { type: 'string' },
    },
    {
      what: 'a nullable field loses its type and children, and is no longer required',
      schema: {
        type: 'object',
        required: ['a', 'b'],
        properties: {
          a: { type: 'object', nullable: true, properties: { x: { type: 'string' } } },
          b: { type: 'string' },
        },
      },
      expected: { type: 'object', required: ['b'], properties: { a: {}, b: { type: 'string' } } },
    },
    {
      what: 'a preserve-unknown-fields object loses its type and children',
      schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { x: { type: 'string' } } },
      expected: { 'x-kubernetes-preserve-unknown-fields': true },
    },
    {
      what: 'an array without items loses its type',
      schema: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } },
      expected: { 'x-kubernetes-preserve-unknown-fields': true },
    },
  ])('toV2: $what', ({ schema, expected }) => {
    expect(toV2(structuredClone(schema) as any)).toEqual(expected);
  });
});

describe('OpenAPI v3 index and documents', () => {
  it('lists fencer.dev/v1 with the hash of its document in the URL', () => {
    expect(openApiV3Index(kinds)).toEqual({
      paths: { 'apis/fencer.dev/v1': { serverRelativeURL: `/openapi/v3/apis/fencer.dev/v1?hash=${documentHash(v3)}` } },
    });
    expect(documentHash(v3)).toMatch(/^[0-9A-F]{128}$/);
  });

  it('gives the same document and hash every time, and another hash when a CRD changes', () => {
    expect(openApiV3(fencerKinds(), 'apis/fencer.dev/v1')).toEqual(v3);
    expect(documentHash(openApiV3(kinds, 'apis/fencer.dev/v1'))).toBe(documentHash(v3));
    const changed = kinds.map((k) =>
      k.kind === 'Job' ? { ...k, shortNames: ['j'], schema: { ...k.schema, description: 'changed' } } : k,
    );
    expect(documentHash(openApiV3(changed, 'apis/fencer.dev/v1'))).not.toBe(documentHash(v3));
  });

  it('is an OpenAPI 3.0 document; nothing is served at another group version', () => {
    expect(v3).toMatchObject({ openapi: '3.0.0', info: { title: 'fencer' } });
    expect(v2).toMatchObject({ swagger: '2.0', info: { title: 'fencer' } });
    expect(openApiV3(kinds, 'apis/batch/v1')).toBeNull();
  });
});
