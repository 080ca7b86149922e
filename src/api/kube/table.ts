// Objects as a meta.k8s.io Table, which is how kubectl get prints any kind it has no code for:
// the server picks the columns (a CRD's additionalPrinterColumns after Name) and renders each
// cell; kubectl only lays them out (a null cell blank). Cells follow kube-apiserver's
// rendering for CRDs:
//
//   string    the value as text (an object or list as compact JSON); null when missing
//   integer   a number, truncated; null when missing or not a number
//   number    a number; boolean a boolean; null otherwise
//   date      the time since the RFC 3339 value, e.g. 5m10s (a value in the future renders
//             <invalid>, as it does on a Kubernetes apiserver; not a time: <invalid>)
import { humanDuration } from '../../domain/duration.js';
import { parseDateTime } from '../../domain/date-time.js';
import type { ColumnType, KubeKind, PrinterColumn } from './kinds.js';
import { NAME_DESCRIPTION } from './openapi-meta.js';
import type { TableVersion } from './accept.js';

export interface TableColumnDefinition {
  name: string;
  type: ColumnType;
  format: string;
  description: string;
  priority: number;
}

export type Cell = string | number | boolean | null;

export interface KubeObject {
  metadata?: { name?: string; creationTimestamp?: string; [field: string]: unknown };
  [field: string]: unknown;
}

export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: string;
  metadata: Record<string, unknown>;
}

export interface TableRow {
  cells: Cell[];
  object?: PartialObjectMetadata | KubeObject;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** What each row carries besides its cells (the includeObject query parameter). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  /** The clock date columns are rendered against. */
  now: Date;
  /** Default Metadata: kubectl reads the namespace and labels of a row from it (-A, --show-labels). */
  includeObject?: IncludeObject;
  /** The Table version the client asked for (accept.ts); default v1. */
  version?: TableVersion;
  /** The list's metadata, for a table of a list. */
  listMeta?: ListMeta;
}

const INCLUDE_OBJECT: readonly IncludeObject[] = ['None', 'Metadata', 'Object'];

/** The includeObject query parameter, or null when it names none of None, Metadata, Object (400). */
export function parseIncludeObject(value: string | undefined): IncludeObject | null {
  if (value === undefined || value === '') return 'Metadata';
  return (INCLUDE_OBJECT as readonly string[]).includes(value) ? (value as IncludeObject) : null;
}

/** Name first, then the kind's printer columns. */
export function columnDefinitions(kind: KubeKind): TableColumnDefinition[] {
  return [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
    ...kind.printerColumns.map((column) => ({
      name: column.name,
      type: column.type,
      format: column.format ?? '',
      description: column.description ?? `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
      priority: column.priority ?? 0,
    })),
  ];
}

/** A GET (one object) or a list as a Table. */
export function toTable(kind: KubeKind, objects: readonly KubeObject[], options: TableOptions): Table {
  const apiVersion = `meta.k8s.io/${options.version ?? 'v1'}`;
  const includeObject = options.includeObject ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion,
    metadata: { ...options.listMeta },
    columnDefinitions: columnDefinitions(kind),
    rows: objects.map((object) => {
      const row: TableRow = {
        cells: [
          object.metadata?.name ?? '',
          ...kind.printerColumns.map((column) => cellOf(column, object, options.now)),
        ],
      };
      if (includeObject === 'Object') row.object = object;
      if (includeObject === 'Metadata')
        row.object = { kind: 'PartialObjectMetadata', apiVersion, metadata: { ...object.metadata } };
      return row;
    }),
  };
}

function cellOf(column: PrinterColumn, object: KubeObject, now: Date): Cell {
  const value = evaluateJsonPath(object, column.jsonPath);
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case 'string':
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? age(value, now) : null;
  }
}

/** Go's zero time: what a Go client writes for a time it does not have. */
const ZERO_TIME = Date.parse('0001-01-01T00:00:00Z');

function age(timestamp: string, now: Date): string {
  const at = parseDateTime(timestamp);
  if (at === null) return '<invalid>';
  if (at === ZERO_TIME) return '<unknown>';
  return humanDuration(now.getTime() - at);
}

/**
 * The value at a printer column's path, or undefined when any step is missing. CRD columns
 * hold simple paths: `.a.b`, `.a['dotted.key']`, `.a[0]`, `.a.dotted\.key`.
 */
export function evaluateJsonPath(object: unknown, path: string): unknown {
  const steps = parseJsonPath(path);
  if (steps === null) return undefined;
  let node: unknown = object;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(node)) return undefined;
      node = node[step < 0 ? node.length + step : step];
    } else {
      if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, step))
        return undefined;
      node = (node as Record<string, unknown>)[step];
    }
  }
  return node;
}

const STEP = /^(?:\.((?:[^.[\\]|\\.)+)|\[(-?\d+)\]|\[(['"])(.*?)\3\])/;

/** The steps of a simple JSONPath (with or without its braces), or null when it is not one. */
export function parseJsonPath(path: string): Array<string | number> | null {
  let rest = path.trim().replace(/^\{(.*)\}$/, '$1');
  const steps: Array<string | number> = [];
  while (rest !== '') {
    const match = STEP.exec(rest);
    if (!match) return null;
    if (match[1] !== undefined) steps.push(match[1].replace(/\\\./g, '.'));
    else if (match[2] !== undefined) steps.push(Number(match[2]));
    else steps.push(match[4] ?? '');
    rest = rest.slice(match[0].length);
  }
  return steps;
}
