// The discovery documents kube-apiserver serves, built from the kinds: how kubectl learns which
// resources exist, their short names, scope and verbs before it sends a request. Two forms:
//
//   legacy      GET /api → APIVersions, /api/v1 → APIResourceList (core group),
//               GET /apis → APIGroupList, /apis/G → APIGroup, /apis/G/V → APIResourceList
//   aggregated  GET /api and GET /apis → APIGroupDiscoveryList: every group, version and
//               resource in one document (kubectl asks for it first, see accept.ts)
//
// Each function takes the kinds it describes, so /api gets CORE_KINDS and /apis fencer's.
import { createHash } from 'node:crypto';
import { groupVersionOf, type KubeKind, type Verb } from './kinds.js';

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs: Array<{ clientCIDR: string; serverAddress: string }>;
}

export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroup[];
}

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion?: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  subresources?: Array<{ subresource: string; responseKind: GroupVersionKind; verbs: Verb[] }>;
}

export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: 'apidiscovery.k8s.io/v2' | 'apidiscovery.k8s.io/v2beta1';
  metadata: Record<string, never>;
  items: Array<{
    metadata: { name?: string; creationTimestamp: null };
    versions: Array<{ version: string; resources: APIResourceDiscovery[]; freshness: 'Current' }>;
  }>;
}

/**
 * GET /api. `serverAddress` is host:port as clients reach this server; kube-apiserver names
 * its own address for every client network (0.0.0.0/0).
 */
export function apiVersions(serverAddress: string): APIVersions {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** GET /apis: every group of `kinds` with its versions, the first listed preferred. */
export function apiGroupList(kinds: readonly KubeKind[]): APIGroupList {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groupsOf(kinds).map(([name, versions]) => groupEntry(name, versions)),
  };
}

/** GET /apis/GROUP, or null when no kind is of that group. */
export function apiGroup(kinds: readonly KubeKind[], group: string): APIGroup | null {
  const versions = groupsOf(kinds).find(([name]) => name === group)?.[1];
  return versions ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) } : null;
}

/**
 * GET /apis/GROUP/VERSION (or /api/v1 for the core group): the resources of one group version
 * and their subresources, as `plural/status`. Null when no kind is of that group version.
 */
export function apiResourceList(kinds: readonly KubeKind[], groupVersion: string): APIResourceList | null {
  const served = kinds.filter((k) => groupVersionOf(k) === groupVersion);
  if (served.length === 0) return null;
  const resources = served.flatMap((k): APIResource[] => {
    const main: APIResource = {
      name: k.plural,
      singularName: k.singular,
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: k.verbs,
      ...optionalLists(k),
      storageVersionHash: storageVersionHash(k),
    };
    if (!k.statusVerbs) return [main];
    return [
      main,
      { name: `${k.plural}/status`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: k.statusVerbs },
    ];
  });
  // The core group's list carries no apiVersion in kube-apiserver's answer; the others do.
  const core = served.every((k) => k.group === '');
  return core
    ? { kind: 'APIResourceList', groupVersion, resources }
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

/** GET /api or GET /apis with an aggregated Accept: every group of `kinds`, resources included. */
export function aggregatedDiscovery(kinds: readonly KubeKind[], version: 'v2' | 'v2beta1'): APIGroupDiscoveryList {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groupsOf(kinds).map(([group, versions]) => ({
      // The core group has no name: kube-apiserver leaves the field out.
      metadata: group === '' ? { creationTimestamp: null } : { name: group, creationTimestamp: null },
      versions: versions.map((v) => ({
        version: v,
        resources: kinds.filter((k) => k.group === group && k.version === v).map(resourceDiscovery),
        freshness: 'Current' as const,
      })),
    })),
  };
}

function resourceDiscovery(k: KubeKind): APIResourceDiscovery {
  const responseKind = { group: k.group, version: k.version, kind: k.kind };
  return {
    resource: k.plural,
    responseKind,
    scope: k.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: k.singular,
    verbs: k.verbs,
    ...optionalLists(k),
    ...(k.statusVerbs ? { subresources: [{ subresource: 'status', responseKind, verbs: k.statusVerbs }] } : {}),
  };
}

/** Empty lists are left out, as kube-apiserver's omitempty does. */
function optionalLists(k: KubeKind): Pick<APIResource, 'shortNames' | 'categories'> {
  return {
    ...(k.shortNames.length > 0 ? { shortNames: k.shortNames } : {}),
    ...(k.categories.length > 0 ? { categories: k.categories } : {}),
  };
}

/** Groups in the order their first kind comes, each with its versions in the same order. */
function groupsOf(kinds: readonly KubeKind[]): Array<[string, string[]]> {
  const groups = new Map<string, string[]>();
  for (const k of kinds) {
    const versions = groups.get(k.group) ?? [];
    if (!versions.includes(k.version)) versions.push(k.version);
    groups.set(k.group, versions);
  }
  return [...groups];
}

function groupEntry(name: string, versions: string[]): APIGroup {
  const entries = versions.map((version) => ({ groupVersion: name === '' ? version : `${name}/${version}`, version }));
  return { name, versions: entries, preferredVersion: entries[0] as GroupVersionForDiscovery };
}

/**
 * What a client compares to see that the stored form of a resource changed (the storage
 * migrator does): the first 8 bytes of sha256("group/version/kind"), in base64, as
 * kube-apiserver computes it. fencer stores one version of each kind, the served one.
 */
export function storageVersionHash(k: Pick<KubeKind, 'group' | 'version' | 'kind'>): string {
  const gvk = k.group === '' ? `${k.version}/${k.kind}` : `${k.group}/${k.version}/${k.kind}`;
  return createHash('sha256').update(gvk).digest().subarray(0, 8).toString('base64');
}
