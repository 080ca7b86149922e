// Events as the Table kube-apiserver answers kubectl get events with: its printer's columns and
// cells, all of them (the server prints wide; kubectl shows the priority-1 columns only with
// -o wide). The cells are computed, not read at a path: the object as kind/name in lower case,
// the source as "component, host".
import { humanDuration } from '../../../domain/duration.js';
import { NAME_DESCRIPTION } from '../openapi-meta.js';
import type { TableVersion } from '../accept.js';
import type { IncludeObject, ListMeta, Table, TableColumnDefinition, TableRow } from '../table.js';
import type { KubeEvent } from './present.js';

const COLUMNS: TableColumnDefinition[] = [
  {
    name: 'Last Seen',
    type: 'string',
    format: '',
    description: 'The time at which the most recent occurrence of this event was recorded.',
    priority: 0,
  },
  {
    name: 'Type',
    type: 'string',
    format: '',
    description: 'Type of this event (Normal, Warning), new types could be added in the future',
    priority: 0,
  },
  {
    name: 'Reason',
    type: 'string',
    format: '',
    description:
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    priority: 0,
  },
  { name: 'Object', type: 'string', format: '', description: 'The object that this event is about.', priority: 0 },
  {
    name: 'Subobject',
    type: 'string',
    format: '',
    description:
      'If referring to a piece of an object instead of an entire object, the field of the object it refers to.',
    priority: 1,
  },
  {
    name: 'Source',
    type: 'string',
    format: '',
    description: 'The component reporting this event. Should be a short machine understandable string.',
    priority: 1,
  },
  {
    name: 'Message',
    type: 'string',
    format: '',
    description: 'A human-readable description of the status of this operation.',
    priority: 0,
  },
  {
    name: 'First Seen',
    type: 'string',
    format: '',
    description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
    priority: 1,
  },
  {
    name: 'Count',
    type: 'string',
    format: '',
    description: 'The number of times this event has occurred.',
    priority: 1,
  },
  { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 1 },
];

export interface EventTableOptions {
  now: Date;
  includeObject: IncludeObject;
  version: TableVersion;
  listMeta?: ListMeta;
}

export function eventTable(events: readonly KubeEvent[], options: EventTableOptions): Table {
  const apiVersion = `meta.k8s.io/${options.version}`;
  return {
    kind: 'Table',
    apiVersion,
    metadata: { ...options.listMeta },
    columnDefinitions: COLUMNS,
    rows: events.map((event) => {
      const row: TableRow = { cells: cellsOf(event, options.now) };
      if (options.includeObject === 'Object') row.object = event;
      if (options.includeObject === 'Metadata')
        row.object = { kind: 'PartialObjectMetadata', apiVersion, metadata: { ...event.metadata } };
      return row;
    }),
  };
}

function cellsOf(event: KubeEvent, now: Date): TableRow['cells'] {
  const core = event.apiVersion === 'v1';
  const object = core ? event.involvedObject : event.regarding;
  const source = core ? event.source : event.deprecatedSource;
  const seen = humanDuration(now.getTime() - Date.parse(core ? event.lastTimestamp : event.deprecatedLastTimestamp));
  const first = humanDuration(now.getTime() - Date.parse(core ? event.firstTimestamp : event.deprecatedFirstTimestamp));
  return [
    seen,
    event.type,
    event.reason,
    `${object.kind.toLowerCase()}/${object.name}`,
    '',
    source.host ? `${source.component}, ${source.host}` : source.component,
    (core ? event.message : event.note).trim(),
    first,
    core ? event.count : event.deprecatedCount,
    event.metadata.name,
  ];
}
