// The kinds fencer serves the Kubernetes way, in one place. Each fencer.dev kind comes from its
// CRD in crds/, so a kind added there with a CRD shows up in discovery, OpenAPI and tables
// without a line of code here. The kinds without a CRD are declared below: the core group's
// namespaces (a namespace is a name its objects share, not a stored object) and events, and
// events.k8s.io's events (both views of the history and the cluster events, read-only:
// src/api/kube/events/).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from '../../paths.js';
import type { JsonSchema } from '../validation/schema.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** What fencer serves of a custom resource's verbs, in the order kube-apiserver lists them (no deletecollection yet). */
export const ALL_VERBS: readonly Verb[] = ['delete', 'get', 'list', 'patch', 'create', 'update', 'watch'];

export type ColumnType = 'string' | 'integer' | 'number' | 'boolean' | 'date';

/** A CRD's additionalPrinterColumns entry. */
export interface PrinterColumn {
  name: string;
  type: ColumnType;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface KubeKind {
  /** '' for the core group. */
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: Verb[];
  /** The verbs of the status subresource, or null when the kind has none. */
  statusVerbs: Verb[] | null;
  printerColumns: PrinterColumn[];
  /** The CRD's openAPIV3Schema, or null for a kind without a CRD. */
  schema: JsonSchema | null;
  /** Relative to the project root; null for a kind without a CRD. */
  crdFile: string | null;
}

// Users do not write nodes: agents register them and fencer writes their status.
const VERBS_BY_KIND: Readonly<Record<string, readonly Verb[]>> = { 'fencer.dev/Node': ['get', 'list', 'watch'] };

// fencer writes every status: clients read it.
const STATUS_VERBS: readonly Verb[] = ['get'];

/** A kind without printer columns shows its age, as the apiserver defaults a CRD to. */
const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** What a Kubernetes Event is, in either group; its Table is built by src/api/kube/events/table.ts. */
function eventKind(group: string): KubeKind {
  return {
    group,
    version: 'v1',
    kind: 'Event',
    listKind: 'EventList',
    plural: 'events',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    categories: [],
    verbs: ['get', 'list', 'watch'],
    statusVerbs: null,
    // The cells are computed (the object as kind/name, the source as component, host), as
    // kube-apiserver's printer computes them, not read at a path.
    printerColumns: [],
    schema: null,
    crdFile: null,
  };
}

/** The core v1 Event: fencer's events in the shape kubectl describe and kubectl events read. */
export const CORE_EVENT_KIND: KubeKind = eventKind('');

/** events.k8s.io/v1 Event: the same events in the newer shape (regarding, note). */
export const EVENTS_KIND: KubeKind = eventKind('events.k8s.io');

/**
 * The core group: namespaces (GET /api/v1/namespaces/NS is what a namespace uses against its
 * limits, src/domain/namespace.ts) and events. Namespaces stay first: /api/v1/namespaces answers as CORE_KINDS[0].
 */
export const CORE_KINDS: readonly KubeKind[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    listKind: 'NamespaceList',
    plural: 'namespaces',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    categories: [],
    verbs: ['get', 'list'],
    statusVerbs: null,
    printerColumns: [
      {
        name: 'Pending',
        type: 'integer',
        description: 'Jobs of the namespace not placed yet.',
        jsonPath: '.status.pendingJobs',
      },
      {
        name: 'Running',
        type: 'integer',
        description: 'Jobs of the namespace placed now.',
        jsonPath: '.status.runningJobs',
      },
    ],
    schema: null,
    crdFile: null,
  },
  CORE_EVENT_KIND,
];

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  subresources?: { status?: object };
  additionalPrinterColumns?: PrinterColumn[];
  schema?: { openAPIV3Schema?: JsonSchema };
}

interface Crd {
  kind?: string;
  spec?: {
    group?: string;
    scope?: 'Namespaced' | 'Cluster';
    names?: {
      kind?: string;
      listKind?: string;
      plural?: string;
      singular?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions?: CrdVersion[];
  };
}

/** One kind per served version of a parsed CRD (`file` names it in errors and in the result). */
export function kindsFromCrd(document: unknown, file: string): KubeKind[] {
  const crd = document as Crd;
  const spec = crd.spec;
  const names = spec?.names;
  if (crd.kind !== 'CustomResourceDefinition' || !spec?.group || !names?.kind || !names.plural) {
    throw new Error(`${file} is not a CustomResourceDefinition with spec.group, spec.names.kind and spec.names.plural`);
  }
  const verbs = [...(VERBS_BY_KIND[`${spec.group}/${names.kind}`] ?? ALL_VERBS)];
  return (spec.versions ?? [])
    .filter((version) => version.served !== false)
    .map((version) => ({
      group: spec.group as string,
      version: version.name,
      kind: names.kind as string,
      listKind: names.listKind ?? `${names.kind}List`,
      plural: names.plural as string,
      singular: names.singular ?? (names.kind as string).toLowerCase(),
      namespaced: spec.scope !== 'Cluster',
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      verbs,
      statusVerbs: version.subresources?.status
        ? STATUS_VERBS.filter((verb) => verb === 'get' || verbs.includes(verb))
        : null,
      printerColumns: version.additionalPrinterColumns ?? [AGE_COLUMN],
      schema: version.schema?.openAPIV3Schema ?? null,
      crdFile: file,
    }));
}

/** The kinds of every CRD of `group` in `dir` (relative to the project root), in file order. */
export function readKinds(dir = 'crds', group = 'fencer.dev'): KubeKind[] {
  return crdKinds(dir).filter((kind) => kind.group === group);
}

const parsedDirs = new Map<string, KubeKind[]>();

/** Every CRD's kinds in `dir`, parsed once per process (a replica's start paid for parsing them twice). */
function crdKinds(dir: string): KubeKind[] {
  let kinds = parsedDirs.get(dir);
  if (!kinds) {
    const files = readdirSync(join(projectRoot(), dir))
      .filter((name) => /\.ya?ml$/.test(name))
      .sort();
    kinds = files.flatMap((name) => {
      const file = `${dir}/${name}`;
      return kindsFromCrd(parse(readFileSync(join(projectRoot(), file), 'utf8')), file);
    });
    parsedDirs.set(dir, kinds);
  }
  return kinds;
}

let cached: readonly KubeKind[] | undefined;
let rbac: readonly KubeKind[] | undefined;

/** fencer.dev's kinds, read once per process (the CRDs ship with the code and do not change under it). */
export function fencerKinds(): readonly KubeKind[] {
  return (cached ??= readKinds());
}

/** rbac.fencer.dev's kinds: Role, ClusterRole, RoleBinding, ClusterRoleBinding (src/api/rbac-objects.ts). */
export function rbacKinds(): readonly KubeKind[] {
  return (rbac ??= readKinds('crds', 'rbac.fencer.dev'));
}

/** Every kind whose objects the /apis routes serve: fencer.dev's, then rbac.fencer.dev's. */
export function objectKinds(): readonly KubeKind[] {
  return (objects ??= [...fencerKinds(), ...rbacKinds()]);
}

let objects: readonly KubeKind[] | undefined;

/** Every kind under /apis: fencer.dev's, rbac.fencer.dev's, then events.k8s.io's. */
export function apisKinds(): readonly KubeKind[] {
  return (apis ??= [...objectKinds(), EVENTS_KIND]);
}

let apis: readonly KubeKind[] | undefined;

/** The kind served at /apis/GROUP/VERSION/PLURAL (or /api/v1/PLURAL for group ''), if any. */
export function kindOfResource(
  kinds: readonly KubeKind[],
  group: string,
  version: string,
  plural: string,
): KubeKind | undefined {
  return kinds.find((k) => k.group === group && k.version === version && k.plural === plural);
}

export function groupVersionOf(kind: Pick<KubeKind, 'group' | 'version'>): string {
  return kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
}
