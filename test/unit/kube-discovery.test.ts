// The discovery documents, legacy and aggregated, in the shapes kube-apiserver serves.
import { describe, expect, it } from 'vitest';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  storageVersionHash,
} from '../../src/api/kube/discovery.js';
import { ALL_VERBS, apisKinds, CORE_KINDS, fencerKinds } from '../../src/api/kube/kinds.js';

const kinds = fencerKinds();

const RESOURCES = [
  { name: 'cronjobs', singularName: 'cronjob', kind: 'CronJob', namespaced: true, shortNames: ['fcj'] },
  { name: 'jobs', singularName: 'job', kind: 'Job', namespaced: true, shortNames: ['fj'] },
  { name: 'nodes', singularName: 'node', kind: 'Node', namespaced: false, shortNames: ['fno'] },
  { name: 'queues', singularName: 'queue', kind: 'Queue', namespaced: true, shortNames: ['fq'] },
  {
    name: 'resourcequotas',
    singularName: 'resourcequota',
    kind: 'ResourceQuota',
    namespaced: true,
    shortNames: ['frq'],
  },
  { name: 'workflows', singularName: 'workflow', kind: 'Workflow', namespaced: true, shortNames: ['fwf'] },
];

describe('legacy discovery', () => {
  it('GET /api names the core version and where the server is', () => {
    expect(apiVersions('10.0.0.1:6443')).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
    });
  });

  it('GET /api/v1 lists namespaces (cluster-scoped, get and list) and events (namespaced, read-only)', () => {
    expect(apiResourceList(CORE_KINDS, 'v1')).toEqual({
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        {
          name: 'namespaces',
          singularName: 'namespace',
          namespaced: false,
          kind: 'Namespace',
          verbs: ['get', 'list'],
          shortNames: ['ns'],
          storageVersionHash: expect.any(String),
        },
        {
          name: 'events',
          singularName: 'event',
          namespaced: true,
          kind: 'Event',
          verbs: ['get', 'list', 'watch'],
          shortNames: ['ev'],
          storageVersionHash: storageVersionHash({ group: '', version: 'v1', kind: 'Event' }),
        },
      ],
    });
  });

  it('GET /apis lists rbac.fencer.dev and events.k8s.io after fencer.dev, with its events read-only', () => {
    const v1 = { groupVersion: 'events.k8s.io/v1', version: 'v1' };
    expect(apiGroupList(apisKinds()).groups.map((g) => g.name)).toEqual([
      'fencer.dev',
      'rbac.fencer.dev',
      'events.k8s.io',
    ]);
    expect(apiGroup(apisKinds(), 'events.k8s.io')).toEqual({
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'events.k8s.io',
      versions: [v1],
      preferredVersion: v1,
    });
    expect(apiResourceList(apisKinds(), 'events.k8s.io/v1')).toEqual({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'events.k8s.io/v1',
      resources: [
        {
          name: 'events',
          singularName: 'event',
          namespaced: true,
          kind: 'Event',
          verbs: ['get', 'list', 'watch'],
          shortNames: ['ev'],
          storageVersionHash: expect.any(String),
        },
      ],
    });
  });

  it('GET /apis lists fencer.dev with v1 preferred', () => {
    const v1 = { groupVersion: 'fencer.dev/v1', version: 'v1' };
    expect(apiGroupList(kinds)).toEqual({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [{ name: 'fencer.dev', versions: [v1], preferredVersion: v1 }],
    });
    expect(apiGroup(kinds, 'fencer.dev')).toEqual({
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'fencer.dev',
      versions: [v1],
      preferredVersion: v1,
    });
    expect(apiGroup(kinds, 'batch')).toBeNull();
  });

  describe('GET /apis/fencer.dev/v1', () => {
    const list = apiResourceList(kinds, 'fencer.dev/v1');

    it('is an APIResourceList of fencer.dev/v1', () => {
      expect(list).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'fencer.dev/v1' });
      expect(apiResourceList(kinds, 'fencer.dev/v2')).toBeNull();
    });

    it.each(RESOURCES)(
      'lists $name ($kind, namespaced $namespaced, short $shortNames) and $name/status',
      (expected) => {
        const resources = list?.resources ?? [];
        expect(resources.find((r) => r.name === expected.name)).toEqual({
          ...expected,
          verbs: expected.kind === 'Node' ? ['get', 'list', 'watch'] : ALL_VERBS,
          categories: ['fencer'],
          storageVersionHash: storageVersionHash({ group: 'fencer.dev', version: 'v1', kind: expected.kind }),
        });
        expect(resources.find((r) => r.name === `${expected.name}/status`)).toEqual({
          name: `${expected.name}/status`,
          singularName: '',
          namespaced: expected.namespaced,
          kind: expected.kind,
          verbs: ['get'],
        });
      },
    );
  });

  it('hashes the storage version as kube-apiserver does: 8 bytes of sha256, base64', () => {
    expect(storageVersionHash({ group: 'fencer.dev', version: 'v1', kind: 'Job' })).toMatch(/^[A-Za-z0-9+/]{11}=$/);
    expect(storageVersionHash({ group: 'fencer.dev', version: 'v1', kind: 'Job' })).not.toBe(
      storageVersionHash({ group: 'fencer.dev', version: 'v1', kind: 'Node' }),
    );
  });
});

describe.each(['v2', 'v2beta1'] as const)('aggregated discovery %s', (version) => {
  it('GET /apis: one group, fencer.dev, with v1 and every resource', () => {
    const document = aggregatedDiscovery(kinds, version);
    expect(document).toMatchObject({
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${version}`,
      metadata: {},
    });
    expect(document.items).toHaveLength(1);
    const [group] = document.items;
    expect(group?.metadata).toEqual({ name: 'fencer.dev', creationTimestamp: null });
    expect(group?.versions.map((v) => [v.version, v.freshness])).toEqual([['v1', 'Current']]);
    expect(group?.versions[0]?.resources.map((r) => r.resource)).toEqual(RESOURCES.map((r) => r.name));
  });

  it.each(RESOURCES)('describes $name with its scope, kind, short names and status subresource', (expected) => {
    const resources = aggregatedDiscovery(kinds, version).items[0]?.versions[0]?.resources ?? [];
    const responseKind = { group: 'fencer.dev', version: 'v1', kind: expected.kind };
    expect(resources.find((r) => r.resource === expected.name)).toEqual({
      resource: expected.name,
      responseKind,
      scope: expected.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: expected.singularName,
      verbs: expected.kind === 'Node' ? ['get', 'list', 'watch'] : ALL_VERBS,
      shortNames: expected.shortNames,
      categories: ['fencer'],
      subresources: [{ subresource: 'status', responseKind, verbs: ['get'] }],
    });
  });

  it('GET /apis: events.k8s.io after fencer.dev and rbac.fencer.dev', () => {
    const [, rbac, events] = aggregatedDiscovery(apisKinds(), version).items;
    expect(rbac?.metadata.name).toBe('rbac.fencer.dev');
    expect(rbac?.versions[0]?.resources.map((r) => r.resource)).toEqual([
      'clusterroles',
      'clusterrolebindings',
      'roles',
      'rolebindings',
    ]);
    expect(events).toEqual({
      metadata: { name: 'events.k8s.io', creationTimestamp: null },
      versions: [
        {
          version: 'v1',
          freshness: 'Current',
          resources: [
            {
              resource: 'events',
              responseKind: { group: 'events.k8s.io', version: 'v1', kind: 'Event' },
              scope: 'Namespaced',
              singularResource: 'event',
              verbs: ['get', 'list', 'watch'],
              shortNames: ['ev'],
            },
          ],
        },
      ],
    });
  });

  it('GET /api: the core group, unnamed, with namespaces and events', () => {
    expect(aggregatedDiscovery(CORE_KINDS, version).items).toEqual([
      {
        metadata: { creationTimestamp: null },
        versions: [
          {
            version: 'v1',
            freshness: 'Current',
            resources: [
              {
                resource: 'namespaces',
                responseKind: { group: '', version: 'v1', kind: 'Namespace' },
                scope: 'Cluster',
                singularResource: 'namespace',
                verbs: ['get', 'list'],
                shortNames: ['ns'],
              },
              {
                resource: 'events',
                responseKind: { group: '', version: 'v1', kind: 'Event' },
                scope: 'Namespaced',
                singularResource: 'event',
                verbs: ['get', 'list', 'watch'],
                shortNames: ['ev'],
              },
            ],
          },
        ],
      },
    ]);
  });
});
