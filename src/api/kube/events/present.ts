// fencer's events as Kubernetes Events, in the two shapes clients read: core v1 (involvedObject,
// message; kubectl get events, describe, kubectl events) and events.k8s.io/v1 (regarding, note).
//
//   history row         → about its Job (namespace, name, uid), in the job's namespace; its node,
//                         if any, as the related object. Type, reason and message as
//                         `fencer describe job` shows them (presentJobEvent).
//   cluster event       → about its Node or Replica (cluster-scoped, no namespace), in `default`,
//                         where Kubernetes puts a Node's events.
//
// An Event's name is its object's name, a dot and 16 hex digits, as Kubernetes names events:
// the first digit says the table (0 history, 1 cluster events), the other 15 are the row's id. So
// a name is stable, unique in its namespace, and names the row it was read from.
import { createHash } from 'node:crypto';
import { API_VERSION } from '../../../domain/resources.js';
import type { ClusterEventRow } from '../../../store/cluster-events.js';
import type { HistoryEventRow } from '../../../store/events.js';
import { presentJobEvent } from '../../present.js';

export type EventTable = 'history' | 'cluster';

export type ObjectReference = {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
};

export type EventMeta = {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  annotations?: Record<string, string>;
};

/** What both shapes are made from. */
export interface FencerEvent {
  table: EventTable;
  id: number;
  at: Date;
  namespace: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  action: string;
  epoch: number | null;
  /** The replica whose transaction wrote it, where known. */
  replica: string | null;
}

export type CoreEvent = {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: EventMeta;
  involvedObject: ObjectReference;
  related?: ObjectReference;
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  source: { component: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  eventTime: string;
  count: number;
  action: string;
  reportingComponent: string;
  reportingInstance: string;
};

export type EventsV1Event = {
  apiVersion: 'events.k8s.io/v1';
  kind: 'Event';
  metadata: EventMeta;
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  note: string;
  type: 'Normal' | 'Warning';
  deprecatedSource: { component: string; host?: string };
  deprecatedFirstTimestamp: string;
  deprecatedLastTimestamp: string;
  deprecatedCount: number;
};

export type KubeEvent = CoreEvent | EventsV1Event;

/** source.component and reportingController: who reports every event. */
export const COMPONENT = 'fencer';

/** Cluster-scoped objects' events live here, as Kubernetes puts a Node's. */
export const CLUSTER_EVENTS_NAMESPACE = 'default';

const TABLE_DIGIT: Record<EventTable, string> = { history: '0', cluster: '1' };

export function eventName(table: EventTable, objectName: string, id: number): string {
  return `${objectName}.${TABLE_DIGIT[table]}${id.toString(16).padStart(15, '0')}`;
}

/** The row an Event's name says it was read from, or null when the name is not an Event's. */
export function parseEventName(name: string): { table: EventTable; id: number } | null {
  const match = /^.+\.([01])([0-9a-f]{15})$/.exec(name);
  if (!match) return null;
  const id = Number.parseInt(match[2]!, 16);
  return Number.isSafeInteger(id) ? { table: match[1] === '0' ? 'history' : 'cluster', id } : null;
}

export function fromHistory(row: HistoryEventRow): FencerEvent {
  const shown = presentJobEvent(row);
  const slash = row.job.indexOf('/');
  // '?': the job was gone when its assignment's row was written; its uid still names it.
  const [namespace, name] =
    slash > 0 ? [row.job.slice(0, slash), row.job.slice(slash + 1)] : [CLUSTER_EVENTS_NAMESPACE, row.job_uid];
  return {
    table: 'history',
    id: row.id,
    at: row.at,
    namespace,
    regarding: { apiVersion: API_VERSION, kind: 'Job', namespace, name, uid: row.job_uid },
    ...(row.node ? { related: { apiVersion: API_VERSION, kind: 'Node', name: row.node } } : {}),
    type: shown.type,
    reason: shown.reason,
    message: shown.message,
    action: row.to_state,
    epoch: row.epoch,
    replica: row.replica,
  };
}

// cluster_events.object is kind/name in lower case.
const CLUSTER_KINDS: Record<string, string> = { node: 'Node', replica: 'Replica' };

export function fromClusterEvent(row: ClusterEventRow): FencerEvent {
  const slash = row.object.indexOf('/');
  const [prefix, name] =
    slash > 0 ? [row.object.slice(0, slash), row.object.slice(slash + 1)] : ['replica', row.object];
  return {
    table: 'cluster',
    id: row.id,
    at: row.at,
    namespace: CLUSTER_EVENTS_NAMESPACE,
    regarding: {
      apiVersion: API_VERSION,
      kind: CLUSTER_KINDS[prefix] ?? prefix.charAt(0).toUpperCase() + prefix.slice(1),
      name,
    },
    type: row.type,
    reason: row.reason,
    message: row.message,
    action: row.reason,
    epoch: row.epoch,
    replica: row.replica,
  };
}

export function toCoreEvent(event: FencerEvent, resourceVersion: string): CoreEvent {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: metadataOf(event, resourceVersion),
    involvedObject: event.regarding,
    ...(event.related ? { related: event.related } : {}),
    reason: event.reason,
    message: event.message,
    type: event.type,
    source: sourceOf(event),
    firstTimestamp: time(event.at),
    lastTimestamp: time(event.at),
    eventTime: microTime(event.at),
    count: 1,
    action: event.action,
    reportingComponent: COMPONENT,
    reportingInstance: event.replica ?? COMPONENT,
  };
}

export function toEventsV1(event: FencerEvent, resourceVersion: string): EventsV1Event {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: metadataOf(event, resourceVersion),
    eventTime: microTime(event.at),
    reportingController: COMPONENT,
    reportingInstance: event.replica ?? COMPONENT,
    action: event.action,
    reason: event.reason,
    regarding: event.regarding,
    ...(event.related ? { related: event.related } : {}),
    note: event.message,
    type: event.type,
    deprecatedSource: sourceOf(event),
    deprecatedFirstTimestamp: time(event.at),
    deprecatedLastTimestamp: time(event.at),
    deprecatedCount: 1,
  };
}

function metadataOf(event: FencerEvent, resourceVersion: string): EventMeta {
  const name = eventName(event.table, event.regarding.name, event.id);
  return {
    name,
    namespace: event.namespace,
    uid: uidOf(event),
    resourceVersion,
    creationTimestamp: time(event.at),
    ...(event.epoch !== null ? { annotations: { 'fencer.dev/epoch': String(event.epoch) } } : {}),
  };
}

function sourceOf(event: FencerEvent): { component: string; host?: string } {
  return { component: COMPONENT, ...(event.replica ? { host: event.replica } : {}) };
}

/** Stable: the same row always has the same uid, on every replica. */
function uidOf(event: FencerEvent): string {
  const hex = createHash('sha256').update(`fencer.dev/event/${event.table}/${event.id}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** metav1.Time: RFC 3339 in whole seconds. */
function time(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime: exactly six fractional digits, or Go's parser refuses it. */
function microTime(at: Date): string {
  return at.toISOString().replace(/Z$/, '000Z');
}
