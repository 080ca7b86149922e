// The registry of kinds is read from crds/: every CRD there is a kind with the names, scope and
// printer columns it declares, and the few things a CRD cannot say (verbs) come from one table.
import { describe, expect, it } from 'vitest';
import {
  ALL_VERBS,
  CORE_KINDS,
  fencerKinds,
  kindOfResource,
  kindsFromCrd,
  readKinds,
} from '../../src/api/kube/kinds.js';

describe('fencerKinds', () => {
  const kinds = fencerKinds();

  it.each([
    {
      kind: 'CronJob',
      plural: 'cronjobs',
      singular: 'cronjob',
      listKind: 'CronJobList',
      namespaced: true,
      shortNames: ['fcj'],
      crdFile: 'crds/cronjob.yaml',
    },
    {
      kind: 'Job',
      plural: 'jobs',
      singular: 'job',
      listKind: 'JobList',
      namespaced: true,
      shortNames: ['fj'],
      crdFile: 'crds/job.yaml',
    },
    {
      kind: 'Node',
      plural: 'nodes',
      singular: 'node',
      listKind: 'NodeList',
      namespaced: false,
      shortNames: ['fno'],
      crdFile: 'crds/node.yaml',
    },
    {
      kind: 'Queue',
      plural: 'queues',
      singular: 'queue',
      listKind: 'QueueList',
      namespaced: true,
      shortNames: ['fq'],
      crdFile: 'crds/queue.yaml',
    },
    {
      kind: 'ResourceQuota',
      plural: 'resourcequotas',
      singular: 'resourcequota',
      listKind: 'ResourceQuotaList',
      namespaced: true,
      shortNames: ['frq'],
      crdFile: 'crds/resourcequota.yaml',
    },
    {
      kind: 'Workflow',
      plural: 'workflows',
      singular: 'workflow',
      listKind: 'WorkflowList',
      namespaced: true,
      shortNames: ['fwf'],
      crdFile: 'crds/workflow.yaml',
    },
  ])('$kind is $plural of fencer.dev/v1 from $crdFile', (expected) => {
    const kind = kindOfResource(kinds, 'fencer.dev', 'v1', expected.plural);
    expect(kind).toMatchObject({ ...expected, group: 'fencer.dev', version: 'v1', categories: ['fencer'] });
    expect(kind?.schema).toMatchObject({ type: 'object', properties: { spec: { type: 'object' } } });
  });

  it('has exactly one kind per CRD file, in file order', () => {
    expect(kinds.map((k) => k.kind)).toEqual(['CronJob', 'Job', 'Node', 'Queue', 'ResourceQuota', 'Workflow']);
    expect(readKinds()).toEqual(kinds);
  });

  it.each([
    { kind: 'Job', verbs: ALL_VERBS, statusVerbs: ['get'] },
    { kind: 'Workflow', verbs: ALL_VERBS, statusVerbs: ['get'] },
    { kind: 'Node', verbs: ['get', 'list', 'watch'], statusVerbs: ['get'] },
  ])('$kind serves $verbs, its status $statusVerbs', ({ kind, verbs, statusVerbs }) => {
    expect(kinds.find((k) => k.kind === kind)).toMatchObject({ verbs, statusVerbs });
  });

  it('keeps the printer columns as the CRD declares them', () => {
    expect(kinds.find((k) => k.kind === 'Job')?.printerColumns.map((c) => [c.name, c.type, c.jsonPath])).toEqual([
      ['Phase', 'string', '.status.phase'],
      ['Node', 'string', '.status.node'],
      ['Age', 'date', '.metadata.creationTimestamp'],
    ]);
  });

  it('serves namespaces (cluster-scoped, get and list) and events (namespaced, read-only) in the core group', () => {
    expect(CORE_KINDS).toEqual([
      expect.objectContaining({
        group: '',
        version: 'v1',
        plural: 'namespaces',
        kind: 'Namespace',
        namespaced: false,
        verbs: ['get', 'list'],
      }),
      expect.objectContaining({
        group: '',
        version: 'v1',
        plural: 'events',
        kind: 'Event',
        namespaced: true,
        verbs: ['get', 'list', 'watch'],
        shortNames: ['ev'],
      }),
    ]);
  });
});

describe('kindsFromCrd', () => {
  const crd = (spec: object) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', spec });

  it('fills in what a CRD may leave out: listKind, singular, scope Namespaced, an Age column', () => {
    const [kind] = kindsFromCrd(
      crd({ group: 'fencer.dev', names: { kind: 'Pool', plural: 'pools' }, versions: [{ name: 'v1', served: true }] }),
      'crds/pool.yaml',
    );
    expect(kind).toMatchObject({
      kind: 'Pool',
      listKind: 'PoolList',
      singular: 'pool',
      namespaced: true,
      shortNames: [],
      categories: [],
      statusVerbs: null,
      schema: null,
      printerColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
    });
  });

  it('leaves out versions that are not served', () => {
    const versions = [
      { name: 'v1', served: true },
      { name: 'v1beta1', served: false },
    ];
    expect(
      kindsFromCrd(crd({ group: 'fencer.dev', names: { kind: 'Pool', plural: 'pools' }, versions }), 'f').map(
        (k) => k.version,
      ),
    ).toEqual(['v1']);
  });

  it.each([
    { what: 'another kind of document', document: { kind: 'ConfigMap' } },
    { what: 'a CRD without a group', document: crd({ names: { kind: 'Pool', plural: 'pools' } }) },
    { what: 'a CRD without a plural', document: crd({ group: 'fencer.dev', names: { kind: 'Pool' } }) },
  ])('refuses $what, naming the file', ({ document }) => {
    expect(() => kindsFromCrd(document, 'crds/broken.yaml')).toThrow(/crds\/broken\.yaml/);
  });
});
